import AppStoreTestSupport
import Foundation
import HistorySync
import Logging
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

/// The ledger in PostgreSQL, recorded with the reconciler's range logic (``HistoryLedgerRangesTests``).
@Suite("The reconciler's coverage ledger in the store: kept apart by key, rewritten under a lock", .tags(.store))
struct HistoryLedgerStoreTests {
    /// The ledger key, the hours and the entries of the range tests.
    typealias Ledger = HistoryLedgerRangesTests

    /// Runs `body` with a migrated store on a fresh database whose pool runs for the duration.
    static func withStore(
        timeout: Duration? = nil,
        _ body: @Sendable (NotificationStore) async throws -> Void
    ) async throws {
        var configuration = try await TestPostgresServer.shared().makeDatabase()
        if let timeout { configuration.operationTimeout = timeout }
        var logger = Logger(label: "asnp.store.test")
        logger.logLevel = .warning
        try await NotificationStore.withRunning(configuration: configuration, logger: logger) { store in
            try await store.migrate()
            try await body(store)
        }
    }

    @Test(
        """
        history_listed, per ledger: what is not listed yet, each notification recorded and counted once, the \
        ledger's page and its listed notifications in one transaction, old rows forgotten
        """
    )
    func listedNotifications() async throws {
        try await Self.withStore { store in
            let filtered = HistoryLedger.Key(
                bundleID: Ledger.key.bundleID,
                environment: "Sandbox",
                filter: "onlyFailures"
            )
            let (first, second, third) = (UUID(), UUID(), UUID())
            try await store.updateHistoryLedger(Ledger.key, listed: [first, second], listedAt: Ledger.at(0)) {
                $0.record(Ledger.entry(0, 1, .covered))
            }
            #expect(Ledger.shape(try await store.historyLedger(for: Ledger.key)) == ["covered 0-1"])
            #expect(try await store.historyNotListed([first, second, third], key: Ledger.key) == [third])
            #expect(try await store.historyNotListed([first], key: filtered) == [first], "each ledger its own")
            #expect(try await store.recordHistoryListed([third, third], key: Ledger.key, at: Ledger.at(5)) == 1)
            #expect(try await store.recordHistoryListed([first, third], key: Ledger.key, at: Ledger.at(5)) == 0)
            #expect(try await store.historyNotListed([first, second, third], key: Ledger.key).isEmpty)
            #expect(try await store.deleteHistoryListed(key: Ledger.key, listedBefore: Ledger.at(1)) == 2)
            #expect(try await store.historyNotListed([first, second, third], key: Ledger.key) == [first, second])
        }
    }

    @Test(
        """
        the store keeps each ledger apart (by app, environment and filter) and rewrites it in one transaction under \
        a lock: concurrent records all land, merged; failed deliveries keep the latest attempt and any success, until retention deletes them
        """
    )
    func storeRoundTrip() async throws {
        // Twelve transactions queue for one lock: the last one's deadline covers the eleven before it, which a busy
        // fresh-clone run saw take more than the usual 60 s.
        try await Self.withStore(timeout: .seconds(12 * 60)) { store in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for hour in 0..<12 {
                    group.addTask {
                        try await store.updateHistoryLedger(Ledger.key) {
                            $0.record(Ledger.entry(Double(hour), Double(hour + 1), .covered, pages: 1))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let filtered = HistoryLedger.Key(
                bundleID: Ledger.key.bundleID,
                environment: "Sandbox",
                filter: "onlyFailures"
            )
            try await store.updateHistoryLedger(filtered) { $0.record(Ledger.entry(0, 1, .inProgress, token: "p2")) }
            let ledger = try await store.historyLedger(for: Ledger.key)
            #expect(Ledger.shape(ledger) == ["covered 0-12"])
            #expect(ledger.entries.first?.pages == 12)
            #expect(Ledger.shape(try await store.historyLedger(for: filtered)) == ["in_progress 0-1 p2"])
            #expect(try await store.historyLedgers().map(\.key) == [Ledger.key, filtered])

            let uuid = UUID()
            let delivery = { (minute: Double, result: String, succeeded: Bool) in
                HistoryDelivery(
                    bundleID: Ledger.key.bundleID,
                    environment: "Sandbox",
                    notificationUUID: uuid,
                    lastAttemptAt: Ledger.origin.addingTimeInterval(minute * 60),
                    lastResult: result,
                    attempts: 2,
                    everSucceeded: succeeded
                )
            }
            try await store.updateHistoryLedger(Ledger.key, deliveries: [delivery(10, "TIMED_OUT", true)]) { _ in }
            try await store.updateHistoryLedger(Ledger.key, deliveries: [delivery(5, "TLS_ISSUE", false)]) { _ in }
            let summaries = try await store.historyDeliverySummaries()
            #expect(summaries.map(\.lastResult) == ["TIMED_OUT"], "an older report does not overwrite the last attempt")
            #expect(summaries.map(\.neverDelivered) == [0], "a success once seen stays")
            // Retention deletes what was last reported before its cutoff.
            #expect(try await store.deleteHistoryDeliveries(fetchedBefore: Date().addingTimeInterval(-3_600)) == 0)
            #expect(try await store.deleteHistoryDeliveries(fetchedBefore: Date().addingTimeInterval(60)) == 1)
            #expect(try await store.historyDeliverySummaries().isEmpty)
        }
    }
}
