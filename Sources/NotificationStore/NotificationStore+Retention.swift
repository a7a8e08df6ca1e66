import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// The months of `notification_bodies`, oldest first.
    package func bodyPartitions() async throws(NotificationStoreError) -> [BodyPartition] {
        let logger = self.logger
        return try await withConnection("reading the partitions of notification_bodies") { connection in
            try await Self.bodyPartitions(on: connection, logger: logger)
        }
    }

    /// Drops the months of `notification_bodies` that end on or before the start of the UTC month `keepMonths`
    /// before `now`'s, so that the current month and `keepMonths` before it stay; returns the months dropped (with
    /// `dryRun`, the months it would drop). Whole tables go: no DELETE, nothing for vacuum. The facts in
    /// `notifications` and `subscriptions` stay; the dropped months' bodies and decoded JSON are gone for good.
    ///
    /// Each drop waits at most 5 s for its lock (writers hold the parent table briefly, a long query on the month
    /// longer): a month it cannot lock is left for the next run, and the error says so.
    package func applyBodyRetention(
        keepMonths: Int,
        now: Date = Date(),
        dryRun: Bool = false
    ) async throws(NotificationStoreError) -> [BodyPartition] {
        let cutoff = Self.retentionCutoff(keepMonths: keepMonths, now: now)
        let expired = try await bodyPartitions().filter { $0.end <= cutoff }
        guard !dryRun else { return expired }
        let logger = self.logger
        for partition in expired {
            try await inTransaction("dropping \(partition.name)") { connection in
                try await connection.query("SET LOCAL lock_timeout = '5s'", logger: logger)
                // The name comes from the catalog, and is quoted all the same.
                let name = "\"" + partition.name.replacing("\"", with: "\"\"") + "\""
                try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(name)"), logger: logger)
            }
            logger.notice(
                "Dropped a month of bodies past retention",
                metadata: ["partition": "\(partition.name)", "bytes": "\(partition.bytes)"]
            )
        }
        // This store's writes ask for their months again (other stores find out when an insert fails).
        if !expired.isEmpty { bodyPartitions.forgetAll() }
        return expired
    }

    /// The instant before which ``applyBodyRetention(keepMonths:now:dryRun:)`` drops months: the start of the UTC
    /// month `keepMonths` months before `now`'s.
    package static func retentionCutoff(keepMonths: Int, now: Date = Date()) -> Date {
        monthStart(of: now, monthsBefore: keepMonths)
    }

    /// The start of the UTC month `monthsBefore` months before the one `date` is in.
    static func monthStart(of date: Date, monthsBefore: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = calendar.dateComponents([.year, .month], from: date)
        let start = calendar.date(from: DateComponents(year: components.year, month: components.month))!
        return calendar.date(byAdding: .month, value: -monthsBefore, to: start)!
    }

    static func bodyPartitions(on connection: PostgresConnection, logger: Logger) async throws -> [BodyPartition] {
        let rows = try await connection.query(
            """
            SELECT name, bytes, estimated_rows, bounds[1]::timestamptz, bounds[2]::timestamptz
            FROM (
                SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes, c.reltuples::bigint AS estimated_rows,
                    regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)')
                        AS bounds
                FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'notification_bodies'::regclass
            ) partitions
            WHERE bounds IS NOT NULL
            """,
            logger: logger
        )
        var partitions: [BodyPartition] = []
        for try await (name, bytes, rows, start, end) in rows.decode((String, Int64, Int64, Date, Date).self) {
            partitions.append(BodyPartition(name: name, start: start, end: end, bytes: bytes, estimatedRows: rows))
        }
        return partitions.sorted { $0.start < $1.start }
    }
}
