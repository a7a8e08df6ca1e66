import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import Testing
import VerificationTestSupport

@Suite("App and environment policy", .tags(.fast))
struct PolicyTests {
    static func event(
        bundleId: String = "com.example.tests",
        appAppleId: Int64? = nil,
        environment: AppStoreEnvironment
    )
        -> SubscriptionEvent
    {
        SubscriptionEvent(
            notificationType: .subscribed,
            subtype: .initialBuy,
            notificationUUID: UUID().uuidString.lowercased(),
            signedDate: ChainCacheTests.june2026,
            bundleId: bundleId,
            appAppleId: appAppleId,
            environment: environment,
            originalTransactionId: "1",
            transactionId: "2",
            productId: "p"
        )
    }

    @Test("Production requires the app Apple id at configuration time")
    func productionNeedsAppAppleId() throws {
        let production = #expect(throws: VerificationConfigurationError.self) {
            try VerificationPolicy(bundleId: "com.example", environment: .production)
        }
        #expect(production?.code == .missingAppAppleID)
        let empty = #expect(throws: VerificationConfigurationError.self) {
            try VerificationPolicy(bundleId: "", environment: .sandbox)
        }
        #expect(empty?.code == .missingBundleID)
        #expect(empty?.description == "MISSING_BUNDLE_ID: the bundle id must not be empty")
        #expect(
            try VerificationPolicy(bundleId: "com.example", appAppleId: 1, environment: .production).checksSignatures
        )
    }

    @Test("in Production the app Apple id must match; in the sandbox it is not checked")
    func appAppleId() async throws {
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let production = try TestVerifiers.make(roots: [pki.root], appAppleId: 42, environment: .production)
        let right = try signer.body(for: Self.event(appAppleId: 42, environment: .production))
        let wrong = try signer.body(for: Self.event(appAppleId: 43, environment: .production))
        #expect(await production.verify(body: Array(right.utf8)).status == "OK")
        #expect(await production.verify(body: Array(wrong.utf8)).status == "INVALID_APP_IDENTIFIER")

        let sandbox = try TestVerifiers.make(roots: [pki.root], appAppleId: 42, environment: .sandbox)
        let sandboxBody = try signer.body(for: Self.event(appAppleId: nil, environment: .sandbox))
        #expect(await sandbox.verify(body: Array(sandboxBody.utf8)).status == "OK")
        #expect(await sandbox.verify(body: Array(right.utf8)).status == "INVALID_ENVIRONMENT")
    }

    @Test("Xcode and LocalTesting data are not signed by the App Store: signatures are skipped, the app is not")
    func unsignedEnvironments() async throws {
        for environment in [AppStoreEnvironment.xcode, .localTesting] {
            // A self-made key and chain no root vouches for, as Xcode's StoreKit testing produces.
            let pki = try TestPKI()
            let signer = NotificationSigner(signer: try JWSSigner(key: pki.leafKey, x5c: []))
            let verifier = try TestVerifiers.make(roots: [], environment: environment)
            let body = try signer.body(for: Self.event(environment: environment))
            #expect(await verifier.verify(body: Array(body.utf8)).status == "OK")
            let otherApp = try signer.body(for: Self.event(bundleId: "com.other", environment: environment))
            #expect(await verifier.verify(body: Array(otherApp.utf8)).status == "INVALID_APP_IDENTIFIER")
            let sandboxBody = try signer.body(for: Self.event(environment: .sandbox))
            #expect(await verifier.verify(body: Array(sandboxBody.utf8)).status == "INVALID_ENVIRONMENT")
        }
    }

    @Test("a notification with none of data, summary, token or appData names no app and is rejected")
    func noContent() async throws {
        let pki = try TestPKI()
        let body = try NotificationSigner(signer: try JWSSigner(pki: pki)).body(
            for: ResponseBodyV2DecodedPayload(
                notificationType: "SOMETHING_NEW",
                notificationUUID: "u",
                signedDate: ChainCacheTests.june2026
            )
        )
        #expect(
            try await TestVerifiers.make(roots: [pki.root]).verify(body: Array(body.utf8)).status
                == "INVALID_APP_IDENTIFIER"
        )
    }

    @Test("the app transaction inside appData is verified against the app and environment")
    func appTransactionChecked() async throws {
        let pki = try TestPKI()
        let jws = try JWSSigner(pki: pki)
        func body(receiptType: AppStoreEnvironment, bundleId: String) throws -> [UInt8] {
            let appTransaction = AppTransaction(
                receiptType: receiptType,
                bundleId: bundleId,
                appTransactionId: "7",
                signedDate: ChainCacheTests.june2026
            )
            return try TestBodies.appData(appTransaction, signer: jws)
        }
        let verifier = try TestVerifiers.make(roots: [pki.root])
        let ok = await verifier.verify(body: try body(receiptType: .sandbox, bundleId: "com.example.tests"))
        #expect(ok.v2?.appTransaction?.appTransactionId == "7")
        #expect(
            await verifier.verify(body: try body(receiptType: .production, bundleId: "com.example.tests")).status
                == "INVALID_ENVIRONMENT"
        )
        #expect(
            await verifier.verify(body: try body(receiptType: .sandbox, bundleId: "com.other")).status
                == "INVALID_APP_IDENTIFIER"
        )
    }

    @Test("a subscription notification decodes to exactly what was signed")
    func signedRoundTrip() async throws {
        let pki = try TestPKI()
        let event = Self.event(environment: .sandbox)
        let body = try NotificationSigner(signer: try JWSSigner(pki: pki)).body(for: event)
        let notification = try #require(
            try await TestVerifiers.make(roots: [pki.root]).verify(body: Array(body.utf8)).v2
        )
        #expect(notification.transactionInfo == event.transaction)
        #expect(notification.renewalInfo == event.renewalInfo)
        #expect(notification.payload.notificationUUID == event.notificationUUID)
        #expect(notification.payload.subtype == .initialBuy)
    }

    @Test("an ES256 JWS whose alg claims otherwise is rejected even with a valid signature")
    func algorithmPinned() async throws {
        let pki = try TestPKI()
        let signer = try JWSSigner(key: pki.leafKey, x5c: pki.x5c, algorithm: "ES384")
        let body = try NotificationSigner(signer: signer).body(for: Self.event(environment: .sandbox))
        #expect(
            try await TestVerifiers.make(roots: [pki.root]).verify(body: Array(body.utf8)).status
                == "VERIFICATION_FAILURE"
        )
    }

    @Test("errors print their code and reason; only the retryable status is retriable")
    func errorDescriptions() {
        let error = VerificationError(
            code: .invalidPassword,
            reason: "the V1 password matches no configured shared secret",
            context: "detail"
        )
        #expect(error.description == "INVALID_PASSWORD: the V1 password matches no configured shared secret")
        #expect(error.debugDescription.hasSuffix("[detail]"))
        #expect(!error.isRetriable)
        #expect(VerificationError(code: .retryableVerificationFailure, reason: "r").isRetriable)
    }
}
