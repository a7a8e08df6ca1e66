import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import Testing
import VerificationTestSupport

/// Hostile and broken bodies of every kind get a clear status, never a crash and never OK.
@Suite("Bad input", .tags(.fast))
struct BadInputTests {
    static func verifier() throws -> NotificationVerifier { try TestVerifiers.fixtures() }

    @Test(
        "bodies that are not JSON objects are MALFORMED_BODY",
        arguments: [
            "", " ", "null", "42", "\"signedPayload\"", "[]", "[{\"signedPayload\":\"a.b.c\"}]", "{", "{\"a\":}",
            "{\"unrelated\":true}", "\u{FEFF}", "{\"signedPayload\":\"x\"} trailing",
        ]
    )
    func notJSONObjects(_ body: String) async throws {
        let result = try await Self.verifier().verify(body: Array(body.utf8))
        #expect(result.status == "MALFORMED_BODY")
        #expect(result.error?.reason.isEmpty == false)
    }

    @Test("binary and invalid UTF-8 bodies are MALFORMED_BODY")
    func binary() async throws {
        var generator = SystemRandomNumberGenerator()
        for length in [1, 2, 17, 1024, 65_536] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(try await Self.verifier().verify(body: bytes).status == "MALFORMED_BODY")
        }
        #expect(try await Self.verifier().verify(body: [0xFF, 0xFE, 0x7B, 0x7D]).status == "MALFORMED_BODY")
    }

    @Test("a body over the size limit is rejected without being parsed")
    func huge() async throws {
        let huge = "{\"signedPayload\":\"" + String(repeating: "A", count: 2 << 20) + "\"}"
        let result = try await Self.verifier().verify(body: Array(huge.utf8))
        #expect(result.status == "MALFORMED_BODY")
        #expect(result.error?.reason.contains("limit") == true)
    }

    @Test("deeply nested JSON is rejected, not a stack overflow")
    func deeplyNested() async throws {
        let depth = 100_000
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(try await Self.verifier().verify(body: Array(arrays.utf8)).status == "MALFORMED_BODY")
        let objects =
            "{\"signedPayload\":" + String(repeating: "{\"a\":", count: depth) + "1"
            + String(repeating: "}", count: depth) + "}"
        let result = try await Self.verifier().verify(body: Array(objects.utf8))
        #expect(result.status == "MALFORMED_BODY" || result.status == "VERIFICATION_FAILURE")
    }

    @Test(
        "signed payloads that are not App Store JWS are VERIFICATION_FAILURE",
        arguments: [
            "", ".", "..", "a.b", "a.b.c.d", "!!!.$$$.%%%", "e30.e30.", "e30.e30.AAAA",
            // header {"alg":"ES256"} without x5c; header that is a JSON array; payload that is not JSON
            "eyJhbGciOiJFUzI1NiJ9.e30.AAAA", "W10.e30.AAAA", "eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.AAAA",
            // padding and non-canonical trailing bits are not base64url
            "e30=.e30.AAAA", "e31.e30.AAAA",
        ]
    )
    func notAppStoreJWS(_ signedPayload: String) async throws {
        let body = "{\"signedPayload\":\"\(signedPayload)\"}"
        #expect(try await Self.verifier().verify(body: Array(body.utf8)).status == "VERIFICATION_FAILURE")
    }

    @Test("x5c entries that are not certificates are INVALID_CERTIFICATE; wrong counts INVALID_CHAIN_LENGTH")
    func badCertificates() async throws {
        let pki = try TestPKI()
        let payload = ResponseBodyV2DecodedPayload(notificationType: .test, notificationUUID: "u", signedDate: 1)
        let cases: [([String], String)] = [
            (["AAAA", "AAAA", "AAAA"], "INVALID_CERTIFICATE"),
            (["not base64!", pki.x5c[1], pki.x5c[2]], "INVALID_CERTIFICATE"),
            ([pki.x5c[0], "AAAA", pki.x5c[2]], "INVALID_CERTIFICATE"),
            ([pki.x5c[0]], "INVALID_CHAIN_LENGTH"),
            (pki.x5c + pki.x5c, "INVALID_CHAIN_LENGTH"),
            // The intermediate in the leaf's place: a chain of the right length that is not a signing chain.
            ([pki.x5c[1], pki.x5c[1], pki.x5c[2]], "VERIFICATION_FAILURE"),
        ]
        for (x5c, status) in cases {
            let signedPayload = try JWSSigner(key: pki.leafKey, x5c: x5c).sign(payload)
            let result = try await TestVerifiers.make(roots: [pki.root]).verify(
                body: Array(try NotificationSigner.envelope(signedPayload).utf8)
            )
            #expect(result.status == status, "\(x5c.count) certificates")
        }
    }

    @Test("random mutations of a valid body never crash and never verify as something else")
    func mutations() async throws {
        let fixture = try #require(Fixtures.v2Cases.first { $0.kind == "valid" })
        let expectedUUID = try #require(
            try await Self.verifier().verify(body: Array(fixture.body.utf8)).v2?.payload.notificationUUID
        )
        let original = Array(fixture.body.utf8)
        var generator = SystemRandomNumberGenerator()
        let verifier = try Self.verifier()
        for _ in 0..<300 {
            var mutated = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<mutated.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: mutated[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: mutated.remove(at: index)
                default: mutated.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                }
            }
            let result = await verifier.verify(body: mutated)
            if let notification = result.v2 {
                // Only a mutation outside the signed bytes (JSON whitespace, say) may still verify.
                #expect(notification.payload.notificationUUID == expectedUUID)
            } else {
                #expect(!result.status.isEmpty && result.status != "OK")
            }
        }
    }
}
