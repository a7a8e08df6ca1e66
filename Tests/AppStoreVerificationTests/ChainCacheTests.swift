import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import Testing
import VerificationTestSupport

@Suite("The verified-chain cache", .tags(.fast))
struct ChainCacheTests {
    static let day: Int64 = 86_400_000
    /// 2026-06-01, inside the default test PKI validity.
    static let june2026: Int64 = 1_780_272_000_000

    static func event(signedDate: Int64, index: Int = 0) -> SubscriptionEvent {
        SubscriptionEvent(
            notificationType: .didRenew,
            notificationUUID: UUID().uuidString.lowercased(),
            signedDate: signedDate,
            bundleId: "com.example.tests",
            originalTransactionId: String(1_000 + index),
            transactionId: String(5_000 + index),
            productId: "com.example.tests.monthly"
        )
    }

    @Test("a chain is verified once, then every JWS signed by it is served from the cache")
    func chainVerifiedOnce() async throws {
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let verifier = try TestVerifiers.make(roots: [pki.root])
        for index in 0..<20 {
            let body = try signer.body(for: Self.event(signedDate: Self.june2026 + Int64(index), index: index))
            #expect(await verifier.verify(body: Array(body.utf8)).status == "OK")
        }
        let statistics = verifier.signedDataVerifier.chainVerifier.cacheStatistics
        // 20 notifications × 3 JWS: one full verification, 59 cache hits.
        #expect(statistics.misses == 1)
        #expect(statistics.hits == 59)
        #expect(statistics.entries == 1)
    }

    @Test("a leaf that expired before the signed date is rejected even though its chain is cached")
    func expiredLeafRejectedThroughCache() async throws {
        let leafExpiry = Self.june2026 + 10 * Self.day
        let pki = try TestPKI(
            configuration: .init(leafNotValidAfter: Date(timeIntervalSince1970: Double(leafExpiry) / 1000))
        )
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let verifier = try TestVerifiers.make(roots: [pki.root])

        let before = try signer.body(for: Self.event(signedDate: leafExpiry - Self.day))
        #expect(await verifier.verify(body: Array(before.utf8)).status == "OK")
        #expect(verifier.signedDataVerifier.chainVerifier.cacheStatistics.entries == 1)

        let after = try signer.body(for: Self.event(signedDate: leafExpiry + Self.day))
        let rejected = await verifier.verify(body: Array(after.utf8))
        #expect(rejected.status == "VERIFICATION_FAILURE")

        // The cached chain still serves notifications signed while it was valid.
        let again = try signer.body(for: Self.event(signedDate: leafExpiry - 2 * Self.day))
        #expect(await verifier.verify(body: Array(again.utf8)).status == "OK")
    }

    @Test("a notification signed before the chain became valid is rejected")
    func notYetValidRejected() async throws {
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let verifier = try TestVerifiers.make(roots: [pki.root])
        #expect(
            await verifier.verify(body: Array(try signer.body(for: Self.event(signedDate: Self.june2026)).utf8)).status
                == "OK"
        )
        let early = try signer.body(for: Self.event(signedDate: 1_600_000_000_000))  // 2020, before the PKI
        #expect(await verifier.verify(body: Array(early.utf8)).status == "VERIFICATION_FAILURE")
    }

    @Test("the cache holds at most its capacity, and evicted chains still verify")
    func boundedCapacity() async throws {
        let pkis = try (0..<3).map { _ in try TestPKI() }
        let chainVerifier = ChainVerifier(configuration: .init(trustedRoots: pkis.map(\.root), cacheCapacity: 2))
        let verifier = try TestVerifiers.make(roots: [], chainVerifier: chainVerifier)
        for round in 0..<2 {
            for pki in pkis {
                let body = try NotificationSigner(signer: try JWSSigner(pki: pki))
                    .body(for: Self.event(signedDate: Self.june2026 + Int64(round)))
                #expect(await verifier.verify(body: Array(body.utf8)).status == "OK")
                #expect(chainVerifier.cacheStatistics.entries <= 2)
            }
        }
    }

    @Test("per-app verifiers sharing a chain verifier share its cache")
    func sharedAcrossApps() async throws {
        let pki = try TestPKI()
        let chainVerifier = ChainVerifier(configuration: .init(trustedRoots: [pki.root]))
        let appA = try TestVerifiers.make(roots: [], bundleId: "com.example.a", chainVerifier: chainVerifier)
        let appB = try TestVerifiers.make(roots: [], bundleId: "com.example.b", chainVerifier: chainVerifier)
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        var eventA = Self.event(signedDate: Self.june2026)
        eventA.bundleId = "com.example.a"
        var eventB = Self.event(signedDate: Self.june2026)
        eventB.bundleId = "com.example.b"
        #expect(await appA.verify(body: Array(try signer.body(for: eventA).utf8)).status == "OK")
        #expect(await appB.verify(body: Array(try signer.body(for: eventB).utf8)).status == "OK")
        #expect(await appB.verify(body: Array(try signer.body(for: eventA).utf8)).status == "INVALID_APP_IDENTIFIER")
        #expect(chainVerifier.cacheStatistics.misses == 1)
    }

    @Test("with the cache off every JWS verifies its chain, with the same verdicts")
    func cacheOff() async throws {
        let pki = try TestPKI()
        let chainVerifier = ChainVerifier(configuration: .init(trustedRoots: [pki.root], cacheCapacity: 0))
        let verifier = try TestVerifiers.make(roots: [], chainVerifier: chainVerifier)
        let body = try NotificationSigner(signer: try JWSSigner(pki: pki)).body(
            for: Self.event(signedDate: Self.june2026)
        )
        #expect(await verifier.verify(body: Array(body.utf8)).status == "OK")
        #expect(chainVerifier.cacheStatistics == ChainCacheStatistics())
    }
}
