import Logging
import NotificationSchema
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
    /// `dryRun`, the months it would drop) and those held back. Whole tables go: no DELETE, nothing for vacuum. The
    /// facts in `notifications` and `subscriptions` stay; the dropped months' bodies and decoded JSON are gone for good.
    ///
    /// A month holding the body of a notification whose decoded event is still in the outbox (not published yet, or
    /// set aside) is held back until it is published: its event is built from the body (a replayed body keeps its
    /// month of receipt, however old). Each drop waits at most 5 s for its lock (writers hold the parent table
    /// briefly, a long query on the month longer): a month it cannot lock is left for the next run, and the error
    /// says so.
    package func applyBodyRetention(
        keepMonths: Int,
        now: Date = Date(),
        dryRun: Bool = false
    ) async throws(NotificationStoreError) -> BodyRetention {
        let cutoff = Self.retentionCutoff(keepMonths: keepMonths, now: now)
        let logger = self.logger
        var retention = BodyRetention()
        for partition in try await bodyPartitions().filter({ $0.end <= cutoff }) {
            let quoted = "\"" + partition.name.replacing("\"", with: "\"\"") + "\""
            let waiting = try await inTransaction("dropping \(partition.name)") { connection in
                if !dryRun {
                    try await connection.query("SET LOCAL lock_timeout = '5s'", logger: logger)
                    // Locked first, so that no batch stores a notification of this month between the count and
                    // the drop (one blocked meanwhile fails when the month is gone, and is written again).
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "LOCK TABLE \(quoted) IN ACCESS EXCLUSIVE MODE"),
                        logger: logger
                    )
                }
                let waiting =
                    try await connection.query(
                        """
                        SELECT count(*) FROM outbox o JOIN notifications n USING (notification_uuid)
                        WHERE o.stream = 'decoded' AND n.received_at >= \(partition.start)
                            AND n.received_at < \(partition.end)
                        """,
                        logger: logger
                    ).decode(Int.self).first(where: { _ in true }) ?? 0
                if waiting == 0, !dryRun {
                    // The name comes from the catalog, and is quoted all the same.
                    try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(quoted)"), logger: logger)
                }
                return waiting
            }
            guard waiting == 0 else {
                retention.held.append(BodyRetention.HeldMonth(partition: partition, unpublishedEvents: waiting))
                logger.warning(
                    "A month of bodies past retention is kept: decoded events of its notifications wait in the outbox",
                    metadata: ["partition": "\(partition.name)", "events": "\(waiting)"]
                )
                continue
            }
            retention.dropped.append(partition)
            if !dryRun {
                logger.notice(
                    "Dropped a month of bodies past retention",
                    metadata: ["partition": "\(partition.name)", "bytes": "\(partition.bytes)"]
                )
            }
        }
        return retention
    }

    /// The instant before which ``applyBodyRetention(keepMonths:now:dryRun:)`` drops months: the start of the UTC
    /// month `keepMonths` months before `now`'s.
    package static func retentionCutoff(keepMonths: Int, now: Date = Date()) -> Date {
        BodyPartitionMonths.start(of: now, monthsBefore: keepMonths)
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
