import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import KafkaClient
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing
import VerificationTestSupport

@Suite("Subscription state, last writer wins by signedDate", .tags(.store))
struct SubscriptionStateTests {
    @Test(
        "the scenario shuffled, with duplicates, in batches of every size: subscriptions equal scenario-final.json",
        arguments: [
            (UInt64(1), 1), (2, 5), (3, 7), (4, 1000), (5, 3),
        ]
    )
    func shuffled(seed: UInt64, batchSize: Int) async throws {
        let (server, configuration) = try await makeDatabase()
        var generator = SeededGenerator(seed: seed)
        var entries = try await StoreFixtures.scenarioEntries()
        // Apple retries: every body once more, then everything in random order.
        entries += entries.shuffled(using: &generator).prefix(entries.count / 2)
        entries.shuffle(using: &generator)
        let shuffled = entries
        let total = try await withStore(configuration) { store in
            var stored = 0
            for start in stride(from: 0, to: shuffled.count, by: batchSize) {
                let batch = Array(shuffled[start..<min(start + batchSize, shuffled.count)])
                stored += try await store.write(NotificationBatch(entries: batch)).storedNotifications.count
            }
            return stored
        }
        #expect(try await StoreFixtures.finalTypes(server, configuration.database) == StoreFixtures.scenarioFinal())
        #expect(total == Set(try StoreFixtures.scenario().map(\.uuid)).count)
    }

    @Test("an older notification arriving after a newer one never overwrites it, and publishes no state")
    func olderArrivesLate() async throws {
        let (server, configuration) = try await makeDatabase()
        let lines = try StoreFixtures.scenario().filter { $0.key == "5000000007" && $0.dup != true }
        let newest = await StoreFixtures.entry(body: lines.last!.body, offset: 10)
        var older: [NotificationBatch.Entry] = []
        for (offset, line) in lines.dropLast().enumerated() {
            older.append(await StoreFixtures.entry(body: line.body, offset: Int64(offset)))
        }
        let olderEntries = older
        let late = try await withStore(configuration) { store in
            _ = try await store.write(NotificationBatch(entries: [newest]))
            return try await store.write(NotificationBatch(entries: olderEntries))
        }
        #expect(late.storedNotifications.count == olderEntries.count)
        #expect(late.subscriptionChanges.isEmpty)
        #expect(late.outbox.allSatisfy { $0.stream == .decoded })
        #expect(try await StoreFixtures.finalTypes(server, configuration.database) == ["5000000007": "EXPIRED"])
    }

    @Test("equal signedDates: the higher notification_uuid wins, whatever the order")
    func tieBreak() async throws {
        let line = try StoreFixtures.scenario()[0]
        let base = await StoreFixtures.entry(body: line.body, offset: 0)
        guard case .verified(.v2(let decoded)) = base.verdict else {
            Issue.record("the fixture did not verify")
            return
        }
        // Two notifications of one subscription signed at the same millisecond, with different types.
        func variant(_ uuid: String, _ type: String, offset: Int64) -> NotificationBatch.Entry {
            var notification = decoded
            notification.payload.notificationUUID = uuid
            notification.payload.notificationType = .init(rawValue: type)
            var raw = base.raw
            raw.source.offset = offset
            return NotificationBatch.Entry(raw: raw, verdict: .verified(.v2(notification)))
        }
        let low = variant("00000000-0000-4000-8000-000000000001", "DID_RENEW", offset: 1)
        let high = variant("ffffffff-0000-4000-8000-000000000002", "EXPIRED", offset: 2)
        for order in [[low, high], [high, low]] {
            let (server, configuration) = try await makeDatabase()
            try await withStore(configuration) { store in
                for entry in order {
                    _ = try await store.write(NotificationBatch(entries: [entry]))
                }
            }
            #expect(try await StoreFixtures.finalTypes(server, configuration.database) == [line.key: "EXPIRED"])
        }
    }

    @Test(
        """
        a late notification about a later purchase changes the row, not its newest notification: a state published \
        before it is not current, and its outbox row is kept to publish again
        """
    )
    func staleStateAfterPurchaseOnlyChange() async throws {
        let (server, configuration) = try await makeDatabase()
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let verifier = try TestVerifiers.make(
            roots: [pki.root],
            bundleId: Fixtures.bundleId,
            appAppleId: Fixtures.appAppleId
        )
        let key = "7300000001"
        let day: Int64 = 86_400_000
        let start: Int64 = 1_790_000_000_000
        func event(_ type: NotificationType, transaction: String, at: Int64, purchased: Int64) -> SubscriptionEvent {
            SubscriptionEvent(
                notificationType: type,
                notificationUUID: UUID().uuidString.lowercased(),
                signedDate: at,
                bundleId: Fixtures.bundleId,
                appAppleId: Fixtures.appAppleId,
                originalTransactionId: key,
                transactionId: transaction,
                productId: "com.example.notes.pro.monthly",
                purchaseDate: purchased,
                expiresDate: purchased + 30 * day
            )
        }
        let bought = event(.subscribed, transaction: "a", at: start, purchased: start)
        let renewed = event(.didRenew, transaction: "b", at: start + 30 * day, purchased: start + 30 * day)
        var request = bought
        request.notificationType = .consumptionRequest
        request.notificationUUID = UUID().uuidString.lowercased()
        request.signedDate = start + 31 * day
        var entries: [NotificationBatch.Entry] = []
        for (offset, event) in [bought, request, renewed].enumerated() {
            entries.append(
                await StoreFixtures.entry(body: try signer.body(for: event), offset: Int64(offset), verifier: verifier)
            )
        }
        let batches = [Array(entries.prefix(2)), [entries[2]]]
        let newest = "SELECT last_notification_uuid || '|' || transaction_id FROM subscriptions"
        let requestUUID = request.notificationUUID
        try await withStore(configuration) { store in
            let first = try await store.write(NotificationBatch(entries: batches[0]))
            let stateRow = try #require(first.outbox.first { $0.stream == .subscriptionState })
            let published = try #require(try await store.subscriptionStates([key])[key])
            #expect(try await server.psql(configuration.database, newest) == "\(requestUUID)|a")

            let second = try await store.write(NotificationBatch(entries: batches[1]))
            #expect(second.subscriptionChanges.map(\.transactionId) == ["b"], "the renewal is a later purchase")
            #expect(try await server.psql(configuration.database, newest) == "\(requestUUID)|b")
            let current = try #require(try await store.subscriptionStates([key])[key])
            #expect(current.version != published.version)

            let stale = OutboxMessage.PublishedState(id: stateRow.id, key: key, version: published.version)
            #expect(try await store.deleteOutbox([], states: [stale]) == [stale], "published again, not deleted")
            let fresh = OutboxMessage.PublishedState(id: stateRow.id, key: key, version: current.version)
            #expect(try await store.deleteOutbox([], states: [fresh]).isEmpty)
            #expect(
                try await server.psql(configuration.database, "SELECT count(*) FROM outbox WHERE id = \(stateRow.id)")
                    == "0"
            )
        }
    }
}
