import KafkaClient
import Logging
import PostgresNIO

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
    /// - Parameter owners: each partition and who claims it.
    /// - Returns: the epoch of each partition claimed.
    package func claim(
        _ owners: [KafkaTopicPartition: String]
    ) async throws(NotificationStoreError) -> [KafkaTopicPartition: Int64] {
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
            var epochs: [KafkaTopicPartition: Int64] = [:]
            for try await (topic, partition, epoch) in rows.decode((String, Int32, Int64).self) {
                epochs[KafkaTopicPartition(topic: topic, partition: partition)] = epoch
            }
            return epochs
        }
    }

    /// The claim: a new epoch per partition, unless the same owner claimed it last.
    static let claimStatement = """
        INSERT INTO partition_owners AS owners (kafka_topic, kafka_partition, epoch, owner, claimed_at)
        SELECT kafka_topic, kafka_partition, 1, owner, now()
        FROM unnest($1::text[], $2::integer[], $3::text[]) AS claims(kafka_topic, kafka_partition, owner)
        ORDER BY kafka_topic, kafka_partition
        ON CONFLICT (kafka_topic, kafka_partition) DO UPDATE SET
            epoch = owners.epoch + CASE WHEN owners.owner = excluded.owner THEN 0 ELSE 1 END,
            owner = excluded.owner,
            claimed_at = excluded.claimed_at
        RETURNING kafka_topic, kafka_partition, epoch
        """

    /// The first statement of a batch transaction: checks that the epochs of `fences` are still their partitions'
    /// latest claims, locking their rows (so a claim waits for this transaction to end), and records the offsets the
    /// batch stored through; throws ``NotificationStoreError/Code/partitionNotOwned`` naming the partitions claimed
    /// by someone else since, and the transaction rolls back. No fences (a tool's write, a test's): nothing to check.
    static func fence(_ fences: [PartitionFence], on connection: PostgresConnection, logger: Logger) async throws {
        guard !fences.isEmpty else { return }
        let fences = fences.sorted { $0.partition < $1.partition }
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(fences.map(\.partition.topic))
        bindings.append(fences.map(\.partition.partition))
        bindings.append(fences.map(\.epoch))
        bindings.append(fences.map(\.nextOffset))
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: BatchStatements.fence, binds: bindings),
            logger: logger
        )
        var owned = Set<KafkaTopicPartition>()
        for try await (topic, partition) in rows.decode((String, Int32).self) {
            owned.insert(KafkaTopicPartition(topic: topic, partition: partition))
        }
        let notOwned = fences.map(\.partition).filter { !owned.contains($0) }
        guard notOwned.isEmpty else {
            throw NotificationStoreError(
                code: .partitionNotOwned,
                reason:
                    "partitions claimed by another worker since: \(notOwned.map(\.description).joined(separator: ", "))",
                partitions: notOwned
            )
        }
    }
}
