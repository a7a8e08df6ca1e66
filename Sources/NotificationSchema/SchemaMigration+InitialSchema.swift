import PostgresRuntime

extension SchemaMigration {
    /// Version 1: notifications, subscriptions, rejected notifications, the outbox and the history-sync checkpoint.
    ///
    /// Docs/store.md describes every column; keep the two in step.
    static let initialSchema = SchemaMigration(
        version: 1,
        name: "initial schema",
        statements: [
            """
            CREATE TABLE notifications (
                notification_uuid       uuid        PRIMARY KEY,
                version                 smallint    NOT NULL CHECK (version IN (1, 2)),
                notification_type       text        NOT NULL,
                subtype                 text,
                environment             text,
                bundle_id               text,
                app_apple_id            bigint,
                original_transaction_id text,
                transaction_id          text,
                product_id              text,
                signed_date             timestamptz,
                expires_date            timestamptz,
                revocation_date         timestamptz,
                auto_renew_status       smallint,
                decoded                 jsonb       COMPRESSION lz4 NOT NULL,
                raw_body                text        COMPRESSION lz4 NOT NULL,
                received_at             timestamptz NOT NULL,
                stored_at               timestamptz NOT NULL DEFAULT now(),
                kafka_topic             text        NOT NULL,
                kafka_partition         integer     NOT NULL,
                kafka_offset            bigint      NOT NULL
            )
            """,
            """
            CREATE INDEX notifications_original_transaction_id_signed_date_idx
                ON notifications (original_transaction_id, signed_date)
            """,
            """
            CREATE INDEX notifications_notification_type_signed_date_idx
                ON notifications (notification_type, signed_date)
            """,
            "CREATE INDEX notifications_transaction_id_idx ON notifications (transaction_id)",
            """
            CREATE TABLE subscriptions (
                original_transaction_id text        PRIMARY KEY,
                last_notification_uuid  uuid        NOT NULL,
                last_notification_type  text        NOT NULL,
                last_subtype            text,
                last_signed_date        timestamptz NOT NULL,
                transaction_id          text,
                product_id              text,
                expires_date            timestamptz,
                auto_renew_status       smallint,
                revocation_date         timestamptz,
                environment             text,
                bundle_id               text,
                app_apple_id            bigint,
                updated_at              timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE INDEX subscriptions_last_notification_type_idx
                ON subscriptions (last_notification_type, last_signed_date)
            """,
            """
            CREATE TABLE rejected_notifications (
                id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                status          text        NOT NULL,
                reason          text        NOT NULL,
                raw_body        bytea       COMPRESSION lz4 NOT NULL,
                headers         jsonb       NOT NULL DEFAULT '{}',
                received_at     timestamptz NOT NULL,
                stored_at       timestamptz NOT NULL DEFAULT now(),
                kafka_topic     text        NOT NULL,
                kafka_partition integer     NOT NULL,
                kafka_offset    bigint      NOT NULL,
                CONSTRAINT rejected_notifications_kafka_coordinates_key
                    UNIQUE (kafka_topic, kafka_partition, kafka_offset)
            )
            """,
            """
            CREATE INDEX rejected_notifications_status_received_at_idx
                ON rejected_notifications (status, received_at)
            """,
            """
            CREATE TABLE outbox (
                id                 bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                stream             text        NOT NULL
                    CHECK (stream IN ('decoded', 'subscription_state', 'dead_letter')),
                message_key        text,
                notification_uuid  uuid,
                rejected_id        bigint,
                subscription_state jsonb,
                source_topic       text        NOT NULL,
                source_partition   integer     NOT NULL,
                created_at         timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX outbox_source_idx ON outbox (source_topic, source_partition, id)",
            """
            CREATE TABLE history_sync (
                id                    bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                bundle_id             text        NOT NULL,
                environment           text        NOT NULL,
                window_start          timestamptz NOT NULL,
                window_end            timestamptz NOT NULL,
                filter                text        NOT NULL DEFAULT '',
                pagination_token      text,
                pages_fetched         bigint      NOT NULL DEFAULT 0,
                notifications_fetched bigint      NOT NULL DEFAULT 0,
                completed_at          timestamptz,
                updated_at            timestamptz NOT NULL DEFAULT now(),
                CONSTRAINT history_sync_window_key UNIQUE (bundle_id, environment, window_start, window_end, filter)
            )
            """,
        ]
    )
}
