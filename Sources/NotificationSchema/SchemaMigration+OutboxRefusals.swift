import PostgresRuntime

extension SchemaMigration {
    /// Version 3: outbox rows the broker refused for good (`refused_at`, `refusal`) are set aside, so they no longer
    /// hold up the rows after them; the index the publishers read by covers only the rows still to publish.
    static let outboxRefusals = SchemaMigration(
        version: 3,
        name: "outbox rows set aside after a permanent refusal",
        statements: [
            "ALTER TABLE outbox ADD COLUMN refused_at timestamptz, ADD COLUMN refusal text",
            """
            CREATE INDEX outbox_pending_idx ON outbox (source_topic, source_partition, id) WHERE refused_at IS NULL
            """,
            "DROP INDEX outbox_source_idx",
        ]
    )
}
