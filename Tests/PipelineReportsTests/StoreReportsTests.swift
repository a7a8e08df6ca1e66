import AppStoreTestSupport
import Foundation
import Logging
import NotificationStore
import PipelineReports
import StoreTestSupport
import Testing

@Suite("Reports read from PostgreSQL: status, subscriptions, the reconciler's ledgers, retention", .tags(.store))
struct StoreReportsTests {
    /// Runs `body` with a store on a fresh, migrated database.
    static func withFreshStore<Result: Sendable>(
        _ body: @Sendable (NotificationStore) async throws -> Result
    ) async throws -> Result {
        let configuration = try await TestPostgresServer.shared().makeDatabase()
        var logger = Logger(label: "asnp.reports.test")
        logger.logLevel = .warning
        return try await NotificationStore.withRunning(configuration: configuration, logger: logger) { store in
            try await store.migrate()
            return try await body(store)
        }
    }

    @Test("an empty store: zero counts, no ledger yet, no subscription or customer to show")
    func emptyStore() async throws {
        try await Self.withFreshStore { store in
            let status = try await StatusReport.read(from: store)
            #expect(status.counts.notifications == 0)
            #expect(status.historyError == nil)
            #expect(status.history?.ledgers.isEmpty == true)
            let lines = status.text.split(separator: "\n").map(String.init)
            #expect(lines.first == "notifications   0")
            #expect(lines.contains("outbox          0 event(s) waiting to be published"))
            #expect(lines.last == "history         no ledger: the reconciler has not run")

            #expect(try await SubscriptionReport.read(from: store, originalTransactionId: "1", limit: 10) == nil)
            #expect(try await CustomerReport.read(from: store, appAccountToken: "nobody") == nil)
        }
    }

    @Test("retention: none set lists the months kept for good; a dry run names what it would drop and drops nothing")
    func retention() async throws {
        try await Self.withFreshStore { store in
            let before = try await store.bodyPartitions().map(\.name)
            let listed = try await RetentionReport.run(on: store, retainMonths: nil, apply: false, dryRun: false)
            #expect(listed.months.map(\.name) == before)
            #expect(listed.cutoff == nil)
            #expect(
                listed.text.hasPrefix("retention: none set (retention.retainBodyMonths): bodies are kept for good\n")
            )

            let dryRun = try await RetentionReport.run(on: store, retainMonths: 1, apply: true, dryRun: true)
            #expect(dryRun.dropped.isEmpty)
            #expect(dryRun.deletedFailedDeliveries == 0)
            #expect(dryRun.months.map(\.name) == before)
            let cutoff = try #require(dryRun.cutoff)
            #expect(dryRun.text.hasPrefix("retention: the current month and 1 before it; bodies before \(cutoff) go"))
            #expect(try await store.bodyPartitions().map(\.name) == before)
        }
    }
}
