import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// Of `uuids`, those `key`'s history requests have not listed before (as far as `history_listed` still keeps):
    /// what a second look at a covered range found late.
    package func historyNotListed(
        _ uuids: [UUID],
        key: HistoryLedger.Key
    ) async throws(NotificationStoreError) -> Set<UUID> {
        guard !uuids.isEmpty else { return [] }
        let logger = self.logger
        return try await withConnection("reading the notifications the history listed for \(key)") { connection in
            let rows = try await connection.query(
                """
                SELECT u FROM unnest(\(uuids)::uuid[]) AS u
                WHERE NOT EXISTS (
                    SELECT 1 FROM history_listed
                    WHERE bundle_id = \(key.bundleID) AND environment = \(key.environment) AND filter = \(key.filter)
                        AND notification_uuid = u
                )
                """,
                logger: logger
            )
            var unlisted: Set<UUID> = []
            for try await uuid in rows.decode(UUID.self) { unlisted.insert(uuid) }
            return unlisted
        }
    }

    /// Records `uuids` as listed for `key` at `listedAt`, and `deliveries`, in one transaction; returns how many of
    /// `uuids` were not recorded yet (a reconciler beside this one may have recorded some meanwhile: each is
    /// counted once).
    package func recordHistoryListed(
        _ uuids: [UUID],
        key: HistoryLedger.Key,
        at listedAt: Date,
        deliveries: [HistoryDelivery] = []
    ) async throws(NotificationStoreError) -> Int {
        let logger = self.logger
        return try await inTransaction("recording the notifications the history listed for \(key)") { connection in
            if !deliveries.isEmpty {
                try await Self.recordDeliveries(deliveries, on: connection, logger: logger)
            }
            return try await Self.recordListed(uuids, key: key, at: listedAt, on: connection, logger: logger)
        }
    }

    /// Forgets what `key`'s requests listed before `cutoff`: no second look reaches back that far. Returns how many
    /// rows went.
    @discardableResult
    package func deleteHistoryListed(
        key: HistoryLedger.Key,
        listedBefore cutoff: Date
    ) async throws(NotificationStoreError) -> Int {
        let logger = self.logger
        return try await withConnection("forgetting old listed notifications of \(key)") { connection in
            let rows = try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM history_listed
                    WHERE bundle_id = \(key.bundleID) AND environment = \(key.environment) AND filter = \(key.filter)
                        AND listed_at < \(cutoff)
                    RETURNING 1
                )
                SELECT count(*) FROM gone
                """,
                logger: logger
            )
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }

    /// Inserts `uuids` into `history_listed` for `key`, keeping rows already there; returns how many were new.
    static func recordListed(
        _ uuids: [UUID],
        key: HistoryLedger.Key,
        at listedAt: Date,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Int {
        guard !uuids.isEmpty else { return 0 }
        let rows = try await connection.query(
            """
            WITH added AS (
                INSERT INTO history_listed (bundle_id, environment, filter, notification_uuid, listed_at)
                SELECT DISTINCT \(key.bundleID), \(key.environment), \(key.filter), u, \(listedAt)::timestamptz
                FROM unnest(\(uuids)::uuid[]) AS u
                ON CONFLICT DO NOTHING
                RETURNING 1
            )
            SELECT count(*) FROM added
            """,
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
