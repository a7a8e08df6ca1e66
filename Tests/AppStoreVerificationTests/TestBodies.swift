import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import SwiftASN1
import X509

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
