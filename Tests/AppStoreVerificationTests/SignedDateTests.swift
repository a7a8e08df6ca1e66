import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import Testing
import VerificationTestSupport

/// The signed date decides when the chain must be valid; any value an attacker can write must get a verdict.
@Suite("Signed dates", .tags(.fast))
struct SignedDateTests {
    static func body(_ pki: TestPKI, signedDate: Int64) throws -> [UInt8] {
        var event = ChainCacheTests.event(signedDate: ChainCacheTests.june2026)
        event.signedDate = signedDate
        return Array(try NotificationSigner(signer: try JWSSigner(pki: pki)).body(for: event).utf8)
    }

    @Test(
        "dates outside what X.509 can express are VERIFICATION_FAILURE, not a crash, cached chain or not",
        arguments: [Int64.max, Int64.min, -100_000_000_000_000, 300_000_000_000_000, 253_402_300_800_000]
    )
    func outOfRange(_ signedDate: Int64) async throws {
        let pki = try TestPKI()
        let verifier = try TestVerifiers.make(roots: [pki.root])
        #expect(
            try await verifier.verify(body: Self.body(pki, signedDate: signedDate)).status == "VERIFICATION_FAILURE"
        )
        #expect(try await verifier.verify(body: Self.body(pki, signedDate: ChainCacheTests.june2026)).status == "OK")
        #expect(
            try await verifier.verify(body: Self.body(pki, signedDate: signedDate)).status == "VERIFICATION_FAILURE"
        )
    }

    @Test("an app transaction without signedDate is judged at its receiptCreationDate, which is range-checked too")
    func receiptCreationDate() async throws {
        let pki = try TestPKI()
        let jws = try JWSSigner(pki: pki)
        func body(receiptCreationDate: Int64) throws -> [UInt8] {
            let appTransaction = AppTransaction(
                receiptType: .sandbox,
                bundleId: "com.example.tests",
                receiptCreationDate: receiptCreationDate
            )
            return try TestBodies.appData(appTransaction, signer: jws)
        }
        let verifier = try TestVerifiers.make(roots: [pki.root])
        #expect(try await verifier.verify(body: body(receiptCreationDate: ChainCacheTests.june2026)).status == "OK")
        #expect(
            try await verifier.verify(body: body(receiptCreationDate: 300_000_000_000_000)).status
                == "VERIFICATION_FAILURE"
        )
        #expect(
            try await verifier.verify(body: body(receiptCreationDate: 1_600_000_000_000)).status
                == "VERIFICATION_FAILURE"
        )
    }

    @Test("validity is judged in whole seconds rounded down, as Apple's library does, with or without the cache")
    func secondsRoundedDown() async throws {
        let notBefore: Int64 = 1_767_225_600  // seconds
        let leafNotAfter: Int64 = 1_780_272_000
        let pki = try TestPKI(
            configuration: .init(
                notValidBefore: Date(timeIntervalSince1970: Double(notBefore)),
                leafNotValidAfter: Date(timeIntervalSince1970: Double(leafNotAfter))
            )
        )
        let cases: [(Int64, String)] = [
            (leafNotAfter * 1000 + 999, "OK"),  // still the last valid second
            (leafNotAfter * 1000 + 1000, "VERIFICATION_FAILURE"),
            (notBefore * 1000, "OK"),
            (notBefore * 1000 - 1, "VERIFICATION_FAILURE"),  // rounds down into the second before
        ]
        for (signedDate, status) in cases {
            let fresh = try TestVerifiers.make(roots: [pki.root])
            #expect(
                try await fresh.verify(body: Self.body(pki, signedDate: signedDate)).status == status,
                "\(signedDate)"
            )
        }
        let warmed = try TestVerifiers.make(roots: [pki.root])
        #expect(
            try await warmed.verify(body: Self.body(pki, signedDate: ChainCacheTests.june2026 - 86_400_000)).status
                == "OK"
        )
        for (signedDate, status) in cases {
            #expect(
                try await warmed.verify(body: Self.body(pki, signedDate: signedDate)).status == status,
                "cached \(signedDate)"
            )
        }
    }

    @Test("a payload of the wrong shape is judged after the chain, as Apple's library does")
    func shapeCheckedLast() async throws {
        let pki = try TestPKI()
        let wrongShape = Data(#"{"signedDate":1780272000000,"data":"not an object","notificationType":7}"#.utf8)
        func status(x5c: [String], payload: Data) async throws -> String {
            let signedPayload = try JWSSigner(key: pki.leafKey, x5c: x5c).sign(payloadJSON: payload)
            return try await TestVerifiers.make(roots: [pki.root])
                .verify(body: Array(try NotificationSigner.envelope(signedPayload).utf8)).status
        }
        #expect(try await status(x5c: Array(pki.x5c.prefix(2)), payload: wrongShape) == "INVALID_CHAIN_LENGTH")
        #expect(try await status(x5c: pki.x5c, payload: wrongShape) == "VERIFICATION_FAILURE")
        #expect(try await status(x5c: pki.x5c, payload: Data("[1,2]".utf8)) == "VERIFICATION_FAILURE")
        #expect(try await status(x5c: pki.x5c, payload: Data(#"{"signedDate":"soon"}"#.utf8)) == "VERIFICATION_FAILURE")
    }
}
