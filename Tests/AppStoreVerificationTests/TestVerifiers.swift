import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import SwiftASN1
import X509

/// Verifiers configured as the fixtures were labelled.
enum TestVerifiers {
    static func root(_ name: String) throws -> Certificate {
        try Certificate(derEncoded: Array(Fixtures.data(name)))
    }

    /// Trusts `test-root.der`; bundle com.example.notes, app 1234567890, Sandbox, the fixtures' V1 secret.
    static func fixtures(roots: [String] = ["test-root.der"]) throws -> NotificationVerifier {
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
    static func make(
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

extension NotificationVerificationResult {
    /// The decoded V2 notification, or nil when rejected or V1.
    var v2: DecodedNotificationV2? {
        if case .verified(.v2(let notification)) = self { return notification }
        return nil
    }

    /// The rejection, or nil when verified.
    var error: VerificationError? {
        if case .rejected(let error) = self { return error }
        return nil
    }
}

/// Bodies of the test suites' own making.
enum TestBodies {
    /// A RESCIND_CONSENT notification for com.example.tests (Sandbox) whose `appData` carries `appTransaction`,
    /// both signed by `signer`.
    static func appData(_ appTransaction: AppTransaction, signer: JWSSigner) throws -> [UInt8] {
        let payload = ResponseBodyV2DecodedPayload(
            notificationType: .rescindConsent,
            notificationUUID: "u",
            signedDate: ChainCacheTests.june2026,
            appData: AppData(
                bundleId: "com.example.tests",
                environment: .sandbox,
                signedAppTransactionInfo: try signer.sign(appTransaction)
            )
        )
        return Array(try NotificationSigner(signer: signer).body(for: payload).utf8)
    }
}
