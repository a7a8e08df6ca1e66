import PostgresRuntime

extension SchemaMigration {
    /// Version 11: `partition_owners`, one row per raw-topic partition a worker claimed: the epoch of its latest claim
    /// and who made it, and the offset after the last batch of it stored. Every batch transaction of a worker locks its
    /// partitions' rows first and stores nothing unless the epoch is still its own: the ownership fence
    /// (Docs/adr/0016-partition-ownership-fence.md).
    static let partitionOwners = SchemaMigration(
        version: 11,
        name: "partition owners",
        statements: [
            """
            CREATE TABLE partition_owners (
                kafka_topic           text        NOT NULL,
                kafka_partition       integer     NOT NULL,
                epoch                 bigint      NOT NULL,
                owner                 text        NOT NULL,
                claimed_at            timestamptz NOT NULL,
                stored_through_offset bigint,
                PRIMARY KEY (kafka_topic, kafka_partition)
            )
            """
        ]
    )
}
