import AppStoreModels
import AppStoreTestSupport
import AppStoreVerification
import Crypto
import Foundation
import SwiftASN1
import Testing
import VerificationTestSupport
import X509

@Suite("Apple's real root and a real Apple-signed notification", .tags(.fast))
struct AppleRootTests {
    @Test("the built-in root is Apple Root CA - G3, byte for byte and by published fingerprint")
    func builtInRootFingerprint() throws {
        let digest = SHA256.hash(data: AppleRootCertificates.appleRootCAG3DER)
        let fingerprint = digest.map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == AppleRootCertificates.appleRootCAG3SHA256Fingerprint)
        #expect(fingerprint.hasPrefix("63:34:3A:BF:") && fingerprint.hasSuffix(":3E:91:79"))
        let shipped = try Data(contentsOf: Fixtures.appleDirectory.appendingPathComponent("AppleRootCA-G3.cer"))
        #expect(Array(shipped) == AppleRootCertificates.appleRootCAG3DER)
        #expect(AppleRootCertificates.appleRootCAG3.subject.description.contains("Apple Root CA - G3"))
    }

    @Test("a real notification signed by Apple's production chain verifies with the default root")
    func realAppleNotification() async throws {
        let verifier = NotificationVerifier(
            configuration: .init(
                policy: try VerificationPolicy(bundleId: "com.loki-project.loki-messenger", environment: .sandbox)
            ),
            chainVerifier: ChainVerifier()
        )
        let result = await verifier.verify(body: try Fixtures.data("apple-real-test-notification.json"))
        #expect(result.status == "OK", "\(result.error?.debugDescription ?? "")")
        #expect(result.v2?.payload.notificationUUID == "592751ef-c1b8-47fc-929e-d62dee66df4c")
        #expect(result.v2?.payload.notificationType == .test)
    }

    @Test("the real notification is rejected under a test root, and for another app")
    func realAppleNotificationRejected() async throws {
        let body = try Fixtures.data("apple-real-test-notification.json")
        let testRootOnly = try TestVerifiers.make(
            roots: [TestVerifiers.root("test-root.der")],
            bundleId: "com.loki-project.loki-messenger"
        )
        #expect(await testRootOnly.verify(body: body).status == "VERIFICATION_FAILURE")
        let otherApp = try TestVerifiers.make(
            roots: [AppleRootCertificates.appleRootCAG3],
            bundleId: "com.example.notes"
        )
        #expect(await otherApp.verify(body: body).status == "INVALID_APP_IDENTIFIER")
    }
}
