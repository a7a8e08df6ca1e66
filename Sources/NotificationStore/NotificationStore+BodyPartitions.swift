import Logging
import NotificationSchema
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// How long making a month waits for `notification_bodies`' lock. Creating a partition takes ACCESS EXCLUSIVE on
    /// the parent table: it waits for every reader of `notifications_decoded` and every writer, and everyone after
    /// it waits behind it. A month that cannot lock in time is tried again, never waited for longer.
    static let partitionLockTimeout: Duration = .seconds(5)

    /// How many months after the current one the store's maintenance makes partitions for: a month in which it
    /// fails every time leaves two more before a batch needs to make one.
    package static let bodyMonthsAhead = 3

    /// How often a month is tried when its lock is not granted in ``partitionLockTimeout``.
    static let partitionAttempts = 3

    /// Makes sure the partitions of `notification_bodies` for the UTC month of `now` and the `monthsAhead` months after
    /// it exist, and returns the names of those it made. Run ahead of the batches that need them (the workers'
    /// maintenance), so that no batch transaction ever creates a partition: the DDL's lock would hold every writer
    /// behind any long reader.
    @discardableResult
    package func makeBodyPartitions(monthsAhead: Int, now: Date = Date()) async throws(NotificationStoreError)
        -> [String]
    {
        try await makeBodyPartitions(
            for: Set((0...max(0, monthsAhead)).map { BodyPartitionMonths.start(of: now, monthsBefore: -$0) })
        )
    }

    /// Makes sure the partitions of the UTC months of `instants` exist, each month made in a short transaction of its
    /// own that waits at most ``partitionLockTimeout`` for the table's lock, ``partitionAttempts`` times; returns the
    /// names of the months it made. A month that exists costs one catalog lookup and takes no lock; one whose bounds
    /// are not its UTC month's fails the call (``NotificationStoreError/Code/queryFailed``, saying so).
    @discardableResult
    func makeBodyPartitions(for instants: Set<Date>) async throws(NotificationStoreError) -> [String] {
        let months = Set(instants.map { BodyPartitionMonths.start(of: $0, monthsBefore: 0) }).sorted()
        let names = months.map(BodyPartitionMonths.partitionName(of:))
        let logger = self.logger
        let existing = try await withConnection("looking up body partitions") { connection in
            var existing = Set<String>()
            // The function, for a month that exists, only checks its bounds (an earlier version's, made in a session
            // zone with daylight-saving time, may miss an hour: that must be said, not retried for ever).
            let rows = try await connection.query(
                """
                SELECT asnp_notification_bodies_partition(month)
                FROM unnest(\(names)::text[], \(months)::timestamptz[]) AS wanted(name, month)
                WHERE to_regclass(name) IS NOT NULL
                """,
                logger: logger
            )
            for try await name in rows.decode(String.self) { existing.insert(name) }
            return existing
        }
        var made: [String] = []
        for (month, name) in zip(months, names) where !existing.contains(name) {
            var attempt = 1
            while true {
                do throws(NotificationStoreError) {
                    try await inTransaction(
                        "making the body partition \(name)",
                        lockTimeout: Self.partitionLockTimeout
                    ) { connection in
                        // Read to the end: a statement's error (the lock timeout) arrives with its rows, and a COMMIT
                        // after it would quietly roll back.
                        let rows = try await connection.query(
                            "SELECT asnp_notification_bodies_partition(\(month))",
                            logger: logger
                        )
                        for try await _ in rows {}
                    }
                    made.append(name)
                    logger.info("Made a month of body partitions", metadata: ["partition": "\(name)"])
                    break
                } catch let error where error.code == .conflict && attempt < Self.partitionAttempts {
                    attempt += 1
                    logger.notice(
                        "A body partition could not lock notification_bodies in time (a long query on it?); trying again",
                        metadata: ["partition": "\(name)", "error": "\(error)"]
                    )
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
        return made
    }

    /// How many UTC months after `now`'s have partitions in `partitions`, counting from the next one until the first
    /// missing: the months ahead of the batches.
    package static func monthsAhead(in partitions: [BodyPartition], now: Date = Date()) -> Int {
        let starts = Set(partitions.map(\.start))
        var ahead = 0
        while starts.contains(BodyPartitionMonths.start(of: now, monthsBefore: -(ahead + 1))) { ahead += 1 }
        return ahead
    }
}
