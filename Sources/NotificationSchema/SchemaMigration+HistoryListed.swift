import PostgresRuntime

extension SchemaMigration {
    /// Version 9: the notifications the reconciler's history requests listed lately (`history_listed`), per app,
    /// environment and filter, so that a second look at a covered range tells the notifications Apple listed late
    /// from those it had listed already. Rows are kept only while a second look may still reach them. A new table
    /// only: a reconciler of the version before ignores it.
    static let historyListed = SchemaMigration(
        version: 9,
        name: "history listed notifications",
        statements: [
            """
            CREATE TABLE history_listed (
                bundle_id         text        NOT NULL,
                environment       text        NOT NULL,
                filter            text        NOT NULL DEFAULT '',
                notification_uuid uuid        NOT NULL,
                listed_at         timestamptz NOT NULL,
                PRIMARY KEY (bundle_id, environment, filter, notification_uuid)
            )
            """,
            "CREATE INDEX history_listed_listed_at_idx ON history_listed (bundle_id, environment, filter, listed_at)",
        ]
    )
}
