import PostgresRuntime

extension SchemaMigration {
    /// Version 7: the reconciler's coverage ledger (`history_ledger`: per app, environment and filter, the time
    /// ranges covered, in progress with their pagination token, or lost because Apple no longer keeps them) and the
    /// failed deliveries Apple's history reports (`history_deliveries`).
    ///
    /// The completed windows of `history_sync` become covered ranges (overlapping windows merged); windows in
    /// progress are not carried over (their ranges are fetched again, and the workers drop what they already have).
    /// `history_sync` itself stays, unused, so that a reconciler of the version before still running during a
    /// rolling upgrade fails nothing; a later migration drops it.
    static let historyLedger = SchemaMigration(
        version: 7,
        name: "history ledger and failed deliveries",
        statements: [
            """
            CREATE TABLE history_ledger (
                bundle_id        text        NOT NULL,
                environment      text        NOT NULL,
                filter           text        NOT NULL DEFAULT '',
                range_start      timestamptz NOT NULL,
                range_end        timestamptz NOT NULL,
                state            text        NOT NULL CHECK (state IN ('covered', 'in_progress', 'lost')),
                pagination_token text,
                pages            bigint      NOT NULL DEFAULT 0,
                notifications    bigint      NOT NULL DEFAULT 0,
                note             text,
                updated_at       timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (bundle_id, environment, filter, range_start),
                CHECK (range_start < range_end)
            )
            """,
            """
            INSERT INTO history_ledger (bundle_id, environment, filter, range_start, range_end, state)
            SELECT bundle_id, environment, filter, lower(covered), upper(covered), 'covered'
            FROM (
                SELECT bundle_id, environment, filter, unnest(range_agg(tstzrange(window_start, window_end))) AS covered
                FROM history_sync WHERE completed_at IS NOT NULL AND window_start < window_end
                GROUP BY bundle_id, environment, filter
            ) AS merged
            """,
            """
            CREATE TABLE history_deliveries (
                bundle_id         text        NOT NULL,
                environment       text        NOT NULL,
                notification_uuid uuid        NOT NULL,
                last_attempt_at   timestamptz,
                last_result       text        NOT NULL,
                attempts          bigint      NOT NULL,
                ever_succeeded    boolean     NOT NULL,
                fetched_at        timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (bundle_id, environment, notification_uuid)
            )
            """,
            "CREATE INDEX history_deliveries_fetched_idx ON history_deliveries (fetched_at)",
        ]
    )
}
