import AppStoreModels
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import SwiftASN1
import X509

/// Verifiers configured as the fixtures were labelled.
package enum TestVerifiers {
    package static func root(_ name: String) throws -> Certificate {
        try Certificate(derEncoded: Array(Fixtures.data(name)))
    }

    /// Trusts `test-root.der`; bundle com.example.notes, app 1234567890, Sandbox, the fixtures' V1 secret.
    package static func fixtures(roots: [String] = ["test-root.der"]) throws -> NotificationVerifier {
        try NotificationVerifier(
            configuration: .init(
                policy: VerificationPolicy(
                    bundleId: Fixtures.bundleId,
                    appAppleId: Fixtures.appAppleId,
                    environment: .sandbox
                ),
                sharedSecrets: [Fixtures.sharedSecret]
            ),
            chainVerifier: ChainVerifier(configuration: .init(trustedRoots: roots.map(root)))
        )
    }

    /// A verifier trusting `roots`, for bodies signed by a ``TestPKI``.
    package static func make(
        roots: [Certificate],
        bundleId: String = "com.example.tests",
        appAppleId: Int64? = nil,
        environment: AppStoreEnvironment = .sandbox,
        sharedSecrets: [String] = [],
        chainVerifier: ChainVerifier? = nil
    ) throws -> NotificationVerifier {
        NotificationVerifier(
            configuration: .init(
                policy: try VerificationPolicy(bundleId: bundleId, appAppleId: appAppleId, environment: environment),
                sharedSecrets: sharedSecrets
            ),
            chainVerifier: chainVerifier ?? ChainVerifier(configuration: .init(trustedRoots: roots))
        )
    }
}
