import KafkaClient
import Logging
import PostgresNIO
import PostgresRuntime

extension NotificationStore {
    /// Makes each writer the owner of its partition: a new epoch in `partition_owners` (1 for a partition never
    /// claimed), which the writer's batches of it carry (``PartitionFence``); from then on a batch carrying an older
    /// epoch stores nothing (``NotificationStoreError/Code/partitionNotOwned``).
    ///
    /// Every batch transaction locks its partitions' rows first, so the claim waits for the transactions of the
    /// previous owner that are still running: once it returns, everything that owner will ever store of the partitions
    /// is in the tables (its outbox rows among them), and a read of them sees it. Claim before the first batch and
    /// before the first read of the outbox.
    ///
    /// A claim made again with the same owner (a retry after an answer that never came) keeps the epoch its first
    /// attempt may have set: name an owner for each assignment of a partition, not once per process.
    ///
    /// The claim also says how far the database holds each partition (``PartitionClaim/storedThroughOffset``): a
    /// writer that resumes from a later offset (the group's committed one) would skip what a database restored to an
    /// earlier point no longer holds, and rewinds to it instead.
    ///
    /// - Parameter owners: each partition and who claims it.
    /// - Returns: each partition's claim.
    package func claim(
        _ owners: [KafkaTopicPartition: String]
    ) async throws(NotificationStoreError) -> [KafkaTopicPartition: PartitionClaim] {
        // In key order, so that claims of overlapping partitions lock their rows in the same order.
        let claims = owners.sorted { $0.key < $1.key }
        guard !claims.isEmpty else { return [:] }
        let logger = self.logger
        // A transaction, so that the server holds the claim to the operation timeout too: one that outlived its
        // caller's deadline must not land after the caller's retry.
        return try await inTransaction("claiming \(claims.count) partitions") { connection in
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(claims.map(\.key.topic))
            bindings.append(claims.map(\.key.partition))
            bindings.append(claims.map(\.value))
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: Self.claimStatement, binds: bindings),
                logger: logger
            )
            return try await Self.claims(in: rows)
        }
    }

    /// The latest claim of each of `partitions` and how far the database holds it, without claiming anything: a
    /// worker's check that the database was not restored behind it meanwhile. A partition never claimed is absent.
    package func partitionOwners(
        _ partitions: [KafkaTopicPartition]
    ) async throws(NotificationStoreError) -> [KafkaTopicPartition: PartitionClaim] {
        guard !partitions.isEmpty else { return [:] }
        let logger = self.logger
        return try await withConnection("reading \(partitions.count) partitions' owners") { connection in
            try await Self.owners(of: partitions, on: connection, logger: logger)
        }
    }

    /// The rows of `partitions` in `partition_owners`.
    private static func owners(
        of partitions: [KafkaTopicPartition],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [KafkaTopicPartition: PartitionClaim] {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(partitions.map(\.topic))
        bindings.append(partitions.map(\.partition))
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: BatchStatements.owners, binds: bindings),
            logger: logger
        )
        return try await claims(in: rows)
    }

    /// Rows of `partition_owners` (topic, partition, epoch, stored-through offset), as claims.
    private static func claims(in rows: PostgresRowSequence) async throws -> [KafkaTopicPartition: PartitionClaim] {
        var claims: [KafkaTopicPartition: PartitionClaim] = [:]
        for try await (topic, partition, epoch, storedThrough) in rows.decode((String, Int32, Int64, Int64?).self) {
            claims[KafkaTopicPartition(topic: topic, partition: partition)] = PartitionClaim(
                epoch: epoch,
                storedThroughOffset: storedThrough
            )
        }
        return claims
    }

    /// The claim: a new epoch per partition, unless the same owner claimed it last; with the offset the database
    /// holds it through.
    ///
    /// A partition without one (never stored by a fenced writer) gets 0 if the database holds no notification and no
    /// rejected body at all: a new database, or one restored to before anything was stored, holds nothing of any
    /// partition, and a group that committed offsets has to start again from the raw topic's oldest message. With
    /// notifications, it stays unknown (NULL): the database was stored before migration 11 made the table (an
    /// upgrade), and the group's committed offset is the best word on it; replaying the whole raw topic would be
    /// for nothing. Only emptiness is checked, which costs a row's read: how far the rows reach per partition would
    /// read the whole table (no index has their offsets first).
    static let claimStatement = """
        INSERT INTO partition_owners AS owners (
            kafka_topic, kafka_partition, epoch, owner, claimed_at, stored_through_offset
        )
        SELECT kafka_topic, kafka_partition, 1, owner, now(),
            CASE WHEN NOT EXISTS (SELECT FROM notifications) AND NOT EXISTS (SELECT FROM rejected_notifications)
                THEN 0 END
        FROM unnest($1::text[], $2::integer[], $3::text[]) AS claims(kafka_topic, kafka_partition, owner)
        ORDER BY kafka_topic, kafka_partition
        ON CONFLICT (kafka_topic, kafka_partition) DO UPDATE SET
            epoch = owners.epoch + CASE WHEN owners.owner = excluded.owner THEN 0 ELSE 1 END,
            owner = excluded.owner,
            claimed_at = excluded.claimed_at,
            stored_through_offset = COALESCE(owners.stored_through_offset, excluded.stored_through_offset)
        RETURNING kafka_topic, kafka_partition, epoch, stored_through_offset
        """

    /// The first statement of a batch transaction: checks that the epochs of `fences` are still their partitions'
    /// latest claims and that the database holds each partition through the fence's
    /// ``PartitionFence/storedThroughOffset``, locking their rows (so a claim waits for this transaction to end), and
    /// records the offsets the batch stored through. Throws ``NotificationStoreError/Code/partitionNotOwned`` naming
    /// the partitions claimed by someone else since, else ``NotificationStoreError/Code/storedOffsetBehind`` naming
    /// those the database holds through less (restored to an earlier point), and the transaction rolls back. No
    /// fences (a tool's write, a test's): nothing to check.
    static func fence(_ fences: [PartitionFence], on connection: PostgresConnection, logger: Logger) async throws {
        guard !fences.isEmpty else { return }
        let fences = fences.sorted { $0.partition < $1.partition }
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(fences.map(\.partition.topic))
        bindings.append(fences.map(\.partition.partition))
        bindings.append(fences.map(\.epoch))
        bindings.append(fences.map(\.nextOffset))
        bindings.append(NullableArray(fences.map(\.storedThroughOffset)))
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: BatchStatements.fence, binds: bindings),
            logger: logger
        )
        var owned = Set<KafkaTopicPartition>()
        for try await (topic, partition) in rows.decode((String, Int32).self) {
            owned.insert(KafkaTopicPartition(topic: topic, partition: partition))
        }
        let refused = fences.filter { !owned.contains($0.partition) }
        guard !refused.isEmpty else { return }
        // Why: read apart, and only on this rare path, so that the fence stays one statement.
        let current = try await owners(of: refused.map(\.partition), on: connection, logger: logger)
        let notOwned = refused.filter { current[$0.partition]?.epoch != $0.epoch }.map(\.partition)
        guard notOwned.isEmpty else {
            throw NotificationStoreError(
                code: .partitionNotOwned,
                reason:
                    "partitions claimed by another worker since: \(notOwned.map(\.description).joined(separator: ", "))",
                partitions: notOwned
            )
        }
        let behind = refused.map { fence in
            let stored = current[fence.partition]?.storedThroughOffset.map(String.init) ?? "unknown"
            return "\(fence.partition) through \(stored), not \(fence.storedThroughOffset.map(String.init) ?? "-")"
        }
        throw NotificationStoreError(
            code: .storedOffsetBehind,
            reason: "the database holds partitions through earlier offsets: \(behind.joined(separator: ", "))",
            partitions: refused.map(\.partition)
        )
    }
}
