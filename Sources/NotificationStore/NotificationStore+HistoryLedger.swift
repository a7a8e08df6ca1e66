import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// The advisory lock key (ASCII `asnh`) under which one ledger is read and rewritten, with the key's hash as
    /// the second half: two reconcilers of the same app and environment record one after the other.
    static let historyLedgerLockKey: Int32 = 0x6173_6E68

    /// The reconciler's ledger for `key` (empty when it never synced it).
    package func historyLedger(for key: HistoryLedger.Key) async throws(NotificationStoreError) -> HistoryLedger {
        let logger = self.logger
        return try await withConnection("reading the history ledger of \(key)") { connection in
            try await Self.historyLedger(for: key, on: connection, logger: logger)
        }
    }

    /// Every ledger, ordered by app, environment and filter.
    package func historyLedgers() async throws(NotificationStoreError) -> [HistoryLedger] {
        let logger = self.logger
        return try await withConnection("reading the history ledgers") { connection in
            let rows = try await connection.query(
                """
                SELECT bundle_id, environment, filter, range_start, range_end, state, pagination_token, pages,
                    notifications, note, updated_at
                FROM history_ledger ORDER BY bundle_id, environment, filter, range_start
                """,
                logger: logger
            )
            var ledgers: [HistoryLedger] = []
            for try await row in rows.decode(
                (String, String, String, Date, Date, String, String?, Int64, Int64, String?, Date).self
            ) {
                let key = HistoryLedger.Key(bundleID: row.0, environment: row.1, filter: row.2)
                let entry = Self.entry((row.3, row.4, row.5, row.6, row.7, row.8, row.9, row.10))
                if ledgers.last?.key == key {
                    ledgers[ledgers.count - 1] = HistoryLedger(
                        key: key,
                        entries: ledgers[ledgers.count - 1].entries + [entry]
                    )
                } else {
                    ledgers.append(HistoryLedger(key: key, entries: [entry]))
                }
            }
            return ledgers
        }
    }

    /// Changes `key`'s ledger with `change` in one transaction, holding the ledger's lock, and records `deliveries`
    /// and the notifications `listed` (at `listedAt`, for a second look) in the same transaction (the page they came
    /// from and its place in the ledger are saved together); returns the ledger as saved.
    @discardableResult
    package func updateHistoryLedger(
        _ key: HistoryLedger.Key,
        deliveries: [HistoryDelivery] = [],
        listed: [UUID] = [],
        listedAt: Date = Date(),
        _ change: @escaping @Sendable (inout HistoryLedger) -> Void
    ) async throws(NotificationStoreError) -> HistoryLedger {
        let logger = self.logger
        return try await inTransaction("recording in the history ledger of \(key)") { connection in
            let lockText = "\(key.bundleID)\n\(key.environment)\n\(key.filter)"
            try await connection.query(
                "SELECT pg_advisory_xact_lock(\(Self.historyLedgerLockKey), hashtext(\(lockText)))",
                logger: logger
            )
            let before = try await Self.historyLedger(for: key, on: connection, logger: logger)
            var ledger = before
            change(&ledger)
            if ledger != before {
                try await connection.query(
                    """
                    DELETE FROM history_ledger
                    WHERE bundle_id = \(key.bundleID) AND environment = \(key.environment) AND filter = \(key.filter)
                    """,
                    logger: logger
                )
                for entry in ledger.entries {
                    try await connection.query(
                        """
                        INSERT INTO history_ledger (bundle_id, environment, filter, range_start, range_end, state,
                            pagination_token, pages, notifications, note, updated_at)
                        VALUES (\(key.bundleID), \(key.environment), \(key.filter), \(entry.start), \(entry.end),
                            \(entry.state.rawValue), \(entry.paginationToken), \(Int64(entry.pages)),
                            \(Int64(entry.notifications)), \(entry.note), \(entry.updatedAt))
                        """,
                        logger: logger
                    )
                }
            }
            if !deliveries.isEmpty {
                try await Self.recordDeliveries(deliveries, on: connection, logger: logger)
            }
            _ = try await Self.recordListed(listed, key: key, at: listedAt, on: connection, logger: logger)
            return ledger
        }
    }

    /// The failed deliveries Apple's history reported, by app, environment and last result.
    package func historyDeliverySummaries() async throws(NotificationStoreError) -> [HistoryDelivery.Summary] {
        let logger = self.logger
        return try await withConnection("reading the failed deliveries") { connection in
            let rows = try await connection.query(
                """
                SELECT bundle_id, environment, last_result, count(*), count(*) FILTER (WHERE NOT ever_succeeded),
                    max(last_attempt_at)
                FROM history_deliveries GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
                """,
                logger: logger
            )
            var summaries: [HistoryDelivery.Summary] = []
            for try await (bundleID, environment, result, count, neverDelivered, latest) in rows.decode(
                (String, String, String, Int64, Int64, Date?).self
            ) {
                summaries.append(
                    HistoryDelivery.Summary(
                        bundleID: bundleID,
                        environment: environment,
                        lastResult: result,
                        notifications: Int(count),
                        neverDelivered: Int(neverDelivered),
                        latestAttemptAt: latest
                    )
                )
            }
            return summaries
        }
    }

    /// Deletes the failed deliveries last reported before `cutoff` (retention keeps them as long as the bodies);
    /// returns how many went.
    package func deleteHistoryDeliveries(fetchedBefore cutoff: Date) async throws(NotificationStoreError) -> Int {
        let logger = self.logger
        return try await withConnection("deleting failed deliveries past retention") { connection in
            let rows = try await connection.query(
                "WITH gone AS (DELETE FROM history_deliveries WHERE fetched_at < \(cutoff) RETURNING 1) SELECT count(*) FROM gone",
                logger: logger
            )
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }

    private static func historyLedger(
        for key: HistoryLedger.Key,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> HistoryLedger {
        let rows = try await connection.query(
            """
            SELECT range_start, range_end, state, pagination_token, pages, notifications, note, updated_at
            FROM history_ledger
            WHERE bundle_id = \(key.bundleID) AND environment = \(key.environment) AND filter = \(key.filter)
            ORDER BY range_start
            """,
            logger: logger
        )
        var entries: [HistoryLedger.Entry] = []
        for try await row in rows.decode((Date, Date, String, String?, Int64, Int64, String?, Date).self) {
            entries.append(entry(row))
        }
        return HistoryLedger(key: key, entries: entries)
    }

    private static func entry(
        _ row: (Date, Date, String, String?, Int64, Int64, String?, Date)
    ) -> HistoryLedger.Entry {
        HistoryLedger.Entry(
            start: row.0,
            end: row.1,
            // The table's check constraint admits only the three states.
            state: HistoryLedger.State(rawValue: row.2) ?? .inProgress,
            paginationToken: row.3,
            pages: Int(row.4),
            notifications: Int(row.5),
            note: row.6,
            updatedAt: row.7
        )
    }

    /// Upserts failed deliveries: the latest attempt wins, `ever_succeeded` only turns true.
    static func recordDeliveries(
        _ deliveries: [HistoryDelivery],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        // One row per notification, or the upsert would touch a row twice.
        var unique: [String: HistoryDelivery] = [:]
        for delivery in deliveries {
            unique["\(delivery.bundleID)\n\(delivery.environment)\n\(delivery.notificationUUID)"] = delivery
        }
        let rows = Array(unique.values)
        let bundles = rows.map(\.bundleID)
        let environments = rows.map(\.environment)
        let uuids = rows.map(\.notificationUUID)
        let attemptedAt = rows.map { $0.lastAttemptAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? -1 }
        let results = rows.map(\.lastResult)
        let attempts = rows.map { Int64($0.attempts) }
        let succeeded = rows.map(\.everSucceeded)
        try await connection.query(
            """
            INSERT INTO history_deliveries AS d (bundle_id, environment, notification_uuid, last_attempt_at,
                last_result, attempts, ever_succeeded)
            SELECT bundle_id, environment, notification_uuid,
                CASE WHEN attempted_ms < 0 THEN NULL ELSE to_timestamp(attempted_ms / 1000.0) END,
                last_result, attempts, ever_succeeded
            FROM unnest(\(bundles)::text[], \(environments)::text[], \(uuids)::uuid[], \(attemptedAt)::bigint[],
                \(results)::text[], \(attempts)::bigint[], \(succeeded)::boolean[])
                AS f(bundle_id, environment, notification_uuid, attempted_ms, last_result, attempts, ever_succeeded)
            ON CONFLICT (bundle_id, environment, notification_uuid) DO UPDATE SET
                last_result = CASE WHEN d.last_attempt_at IS NULL OR EXCLUDED.last_attempt_at >= d.last_attempt_at
                    THEN EXCLUDED.last_result ELSE d.last_result END,
                last_attempt_at = GREATEST(d.last_attempt_at, EXCLUDED.last_attempt_at),
                attempts = GREATEST(d.attempts, EXCLUDED.attempts),
                ever_succeeded = d.ever_succeeded OR EXCLUDED.ever_succeeded,
                fetched_at = now()
            """,
            logger: logger
        )
    }
}
