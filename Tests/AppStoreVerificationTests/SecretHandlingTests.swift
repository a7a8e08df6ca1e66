import AppStoreModels
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import Testing
import VerificationTestSupport

/// Notifications carry customer data and V1 carries the shared secret: neither may reach errors, logs or output.
@Suite("Secrets and payload data stay out of errors and output", .tags(.fast))
struct SecretHandlingTests {
    static let secret = "hunter2-very-secret"

    static func v1(_ fields: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: fields))
    }

    @Test("rejections of V1 bodies never repeat the password")
    func rejectionsDoNotLeak() async throws {
        let bodies: [[UInt8]] = [
            Self.v1(["notification_type": "RENEWAL", "password": Self.secret, "environment": "Sandbox"]),
            Self.v1(["notification_type": 5, "password": Self.secret]),
            Self.v1(["password": Self.secret, "environment": "Sandbox"]),
            Self.v1(["notification_type": "RENEWAL", "password": Self.secret, "environment": "PROD"]),
            Self.v1(["notification_type": "RENEWAL", "password": Self.secret, "bid": "com.other"]),
        ]
        for secrets in [[], ["another-secret"], [Self.secret]] {
            let verifier = try TestVerifiers.make(roots: [], sharedSecrets: secrets)
            for body in bodies {
                let result = await verifier.verify(body: body)
                let text =
                    String(describing: result) + String(reflecting: result) + (result.error?.debugDescription ?? "")
                #expect(!text.contains(Self.secret), "\(result.status)")
            }
        }
    }

    @Test("an accepted V1 notification no longer carries its password")
    func acceptedNotificationDropsPassword() async throws {
        let verifier = try TestVerifiers.make(roots: [], sharedSecrets: [Self.secret])
        let result = await verifier.verify(
            body: Self.v1(["notification_type": "RENEWAL", "password": Self.secret, "environment": "Sandbox"])
        )
        guard case .verified(.v1(let notification)) = result else {
            Issue.record("expected a verified V1 notification, got \(result.status)")
            return
        }
        #expect(notification.password == nil)
        let encoded = String(decoding: try JSONEncoder().encode(notification), as: UTF8.self)
        #expect(!encoded.contains(Self.secret))
        #expect(!String(describing: result).contains(Self.secret))
    }

    @Test("payload values quoted in reasons are bounded and cannot break a log line")
    func reasonsAreSanitised() async throws {
        let verifier = try TestVerifiers.make(roots: [], sharedSecrets: ["s"])
        let hostileBundle = "com.evil\n2026-11-23 INFO forged log line" + String(repeating: "x", count: 500)
        let result = await verifier.verify(
            body: Self.v1([
                "notification_type": "RENEWAL", "password": "s", "environment": "Sandbox", "bid": hostileBundle,
            ])
        )
        let reason = try #require(result.error?.reason)
        #expect(result.status == "INVALID_APP_IDENTIFIER")
        #expect(!reason.contains("\n"))
        #expect(reason.count < 200)
    }

    @Test("a notification version the verifier does not know is MALFORMED_BODY")
    func unknownVersion() async throws {
        let verifier = try TestVerifiers.make(roots: [])
        let result = await verifier.verify(body: Array(#"{"signedPayload":"a.b.c"}"#.utf8), version: .init(rawValue: 3))
        #expect(result.status == "MALFORMED_BODY")
    }
}
