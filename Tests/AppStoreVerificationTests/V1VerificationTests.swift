import AppStoreModels
import AppStoreTestSupport
import Foundation
import Testing
import VerificationTestSupport

@testable import AppStoreVerification

@Suite("V1 shared-secret notifications", .tags(.fast))
struct V1VerificationTests {
    static func body(
        password: String? = "secret-b",
        environment: String = "Sandbox",
        bid: String? = "com.example.tests"
    ) -> [UInt8] {
        var object: [String: Any] = [
            "notification_type": "DID_RENEW", "environment": environment, "original_transaction_id": "9",
        ]
        object["password"] = password
        object["bid"] = bid
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    static func verifier(secrets: [String], environment: AppStoreEnvironment = .sandbox, appAppleId: Int64? = nil)
        throws
        -> NotificationVerifier
    {
        try TestVerifiers.make(roots: [], appAppleId: appAppleId, environment: environment, sharedSecrets: secrets)
    }

    @Test("any of several configured secrets is accepted, for rotation")
    func rotation() async throws {
        let verifier = try Self.verifier(secrets: ["secret-a", "secret-b"])
        #expect(await verifier.verify(body: Self.body(password: "secret-a")).status == "OK")
        #expect(await verifier.verify(body: Self.body(password: "secret-b")).status == "OK")
        #expect(await verifier.verify(body: Self.body(password: "secret-c")).status == "INVALID_PASSWORD")
        #expect(await verifier.verify(body: Self.body(password: "secret-")).status == "INVALID_PASSWORD")
        #expect(await verifier.verify(body: Self.body(password: "")).status == "INVALID_PASSWORD")
    }

    @Test("with no secret configured every V1 body is INVALID_PASSWORD")
    func noSecrets() async throws {
        let result = try await Self.verifier(secrets: []).verify(body: Self.body())
        #expect(result.status == "INVALID_PASSWORD")
        #expect(result.error?.reason.contains("configured") == true)
    }

    @Test("PROD means Production; a body for another app is INVALID_APP_IDENTIFIER")
    func environmentAndApp() async throws {
        let production = try Self.verifier(secrets: ["secret-b"], environment: .production, appAppleId: 1)
        #expect(await production.verify(body: Self.body(environment: "PROD")).status == "OK")
        #expect(await production.verify(body: Self.body(environment: "Sandbox")).status == "INVALID_ENVIRONMENT")
        let sandbox = try Self.verifier(secrets: ["secret-b"])
        #expect(await sandbox.verify(body: Self.body(bid: "com.other")).status == "INVALID_APP_IDENTIFIER")
        #expect(await sandbox.verify(body: Self.body(bid: nil)).status == "OK")
    }

    @Test("the version a route names is enforced: a V1 body on the V2 path is MALFORMED_BODY")
    func forcedVersion() async throws {
        let verifier = try Self.verifier(secrets: ["secret-b"])
        #expect(await verifier.verify(body: Self.body(), version: .v2).status == "MALFORMED_BODY")
        #expect(await verifier.verify(body: Self.body(), version: .v1).status == "OK")
        #expect(
            await verifier.verify(body: Array(#"{"signedPayload":"a.b.c"}"#.utf8), version: .v1).status
                == "MALFORMED_BODY"
        )
    }
}
