import PostgresRuntime

extension SchemaMigration {
    /// Version 2: `rejected_notifications.replayed_at`, set by `asnp replay rejected` once a row's body is back on
    /// the raw topic, so running a replay again does not inject the same bodies again.
    static let replayMarks = SchemaMigration(
        version: 2,
        name: "replay marks on rejected notifications",
        statements: [
            "ALTER TABLE rejected_notifications ADD COLUMN replayed_at timestamptz"
        ]
    )
}
