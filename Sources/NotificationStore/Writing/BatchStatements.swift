/// The SQL of a batch write. Both write methods first produce the same relation, `staged` (one row per consumed
/// notification, dates in milliseconds), and share everything after it.
package enum BatchStatements {
    /// The staged columns, in COPY / UNNEST order.
    package static let stagedColumns: [(name: String, type: String)] = [
        ("ordinal", "integer"),
        ("notification_uuid", "uuid"),
        ("version", "smallint"),
        ("notification_type", "text"),
        ("subtype", "text"),
        ("environment", "text"),
        ("bundle_id", "text"),
        ("app_apple_id", "bigint"),
        ("original_transaction_id", "text"),
        ("transaction_id", "text"),
        ("product_id", "text"),
        ("signed_date", "bigint"),
        ("expires_date", "bigint"),
        ("revocation_date", "bigint"),
        ("auto_renew_status", "smallint"),
        ("status", "smallint"),
        ("grace_period_expires_date", "bigint"),
        ("auto_renew_product_id", "text"),
        ("price", "bigint"),
        ("currency", "text"),
        ("offer_type", "smallint"),
        ("decoded", "jsonb"),
        ("body", "bytea"),
        ("received_at", "bigint"),
        ("kafka_topic", "text"),
        ("kafka_partition", "integer"),
        ("kafka_offset", "bigint"),
    ]

    /// The per-connection staging table of the COPY method; emptied by every commit.
    static let stagingTable = "asnp_staged_notifications"

    /// Creates the staging table on a connection's first batch. Its large columns are stored uncompressed
    /// (`STORAGE EXTERNAL`), so they are compressed once, on the way into `notifications`, not twice.
    static let createStagingTable = """
        DO $$ BEGIN
            IF to_regclass('pg_temp.\(stagingTable)') IS NULL THEN
                CREATE TEMPORARY TABLE \(stagingTable) (\(
                    stagedColumns.map { "\($0.name) \($0.type)" }.joined(separator: ", ")
                )) ON COMMIT DELETE ROWS;
                ALTER TABLE \(stagingTable) ALTER COLUMN decoded SET STORAGE EXTERNAL,
                    ALTER COLUMN body SET STORAGE EXTERNAL;
            END IF;
        END $$
        """

    /// The UNNEST method's source: one array parameter per staged column.
    static let unnestSource = """
        unnest(\(
            stagedColumns.enumerated().map { "$\($0.offset + 1)::\($0.element.type)[]" }.joined(separator: ", ")
        )) AS staged_input(\(stagedColumns.map(\.name).joined(separator: ", ")))
        """

    /// Milliseconds since 1970 to `timestamptz`, NULL staying NULL. Whole seconds and the remaining milliseconds
    /// are added apart: `bigint * interval` goes through float8, which is exact for seconds up to year 9999 but
    /// not for milliseconds.
    static func timestamp(_ column: String) -> String {
        "timestamptz 'epoch' + (\(column) / 1000) * interval '1 second' + (\(column) % 1000) * interval '1 millisecond'"
    }

    /// Whether Apple's `status` says the customer has access: active (1) or in the billing grace period (4); not
    /// when expired (2), in billing retry without a grace period (3) or revoked (5). NULL when the notification
    /// carries no status, or one Apple adds later: unknown, not guessed.
    static func entitled(status: String) -> String {
        "CASE \(status) WHEN 1 THEN true WHEN 4 THEN true WHEN 2 THEN false WHEN 3 THEN false WHEN 5 THEN false END"
    }

    /// Until when access lasts by Apple's fields: the expiry while active, the grace period's end in a grace period;
    /// NULL otherwise.
    static func entitledUntil(status: String, expiresDate: String, gracePeriodExpiresDate: String) -> String {
        "CASE \(status) WHEN 1 THEN \(expiresDate) WHEN 4 THEN \(gracePeriodExpiresDate) END"
    }

    /// The subscription columns the statement returns for changed states, in ``SubscriptionState`` order, with
    /// their types (for the rows of other streams, NULL of each type).
    static let subscriptionColumns: [(name: String, type: String)] = [
        ("original_transaction_id", "text"), ("last_notification_uuid", "uuid"), ("last_notification_type", "text"),
        ("last_subtype", "text"), ("last_signed_date", "timestamptz"), ("transaction_id", "text"),
        ("product_id", "text"), ("expires_date", "timestamptz"), ("auto_renew_status", "smallint"),
        ("revocation_date", "timestamptz"), ("environment", "text"), ("bundle_id", "text"), ("app_apple_id", "bigint"),
        ("status", "smallint"), ("grace_period_expires_date", "timestamptz"), ("auto_renew_product_id", "text"),
        ("price", "bigint"), ("currency", "text"), ("offer_type", "smallint"), ("entitled", "boolean"),
        ("entitled_until", "timestamptz"), ("updated_at", "timestamptz"),
    ]

    /// Inserts new notifications (dedupe on notification_uuid, also within the batch), applies the newest
    /// notification of each subscription under the last-writer-wins guard, and writes outbox rows for what is new.
    /// A decoded event is keyed by its subscription (`original_transaction_id`), or, for a notification without a
    /// transaction, by its own `notification_uuid`: never a null key.
    ///
    /// Also stores the JWS headers the batch's packed bodies refer to (`headers`, from ``headerSource(from:)``),
    /// each once, ever: in this statement rather than one of their own, which cost a round trip per batch.
    ///
    /// Rows are inserted in key order so that concurrent writers take row locks in the same order (no deadlocks
    /// between them). Returns one row per outbox entry: `decoded` rows, then `subscription_state` rows with the
    /// new state, its columns and the outbox's JSON of it.
    static func writeNotifications(from source: String, headers: String) -> String {
        """
        WITH stored_headers AS (
            INSERT INTO jws_headers (digest, header)
            SELECT digest, header FROM \(headers) ORDER BY digest
            ON CONFLICT (digest) DO NOTHING
        ), staged AS (
            SELECT DISTINCT ON (notification_uuid) * FROM \(source) ORDER BY notification_uuid, ordinal
        ), inserted AS (
            INSERT INTO notifications (
                notification_uuid, version, notification_type, subtype, environment, bundle_id, app_apple_id,
                original_transaction_id, transaction_id, product_id, signed_date, expires_date, revocation_date,
                auto_renew_status, received_at, kafka_topic, kafka_partition, kafka_offset
            )
            SELECT notification_uuid, version, notification_type, subtype, environment, bundle_id, app_apple_id,
                original_transaction_id, transaction_id, product_id, \(timestamp("signed_date")),
                \(timestamp("expires_date")), \(timestamp("revocation_date")), auto_renew_status,
                \(timestamp("received_at")), kafka_topic, kafka_partition, kafka_offset
            FROM staged ORDER BY notification_uuid
            ON CONFLICT (notification_uuid) DO NOTHING
            RETURNING notification_uuid, received_at
        ), bodies AS (
            INSERT INTO notification_bodies (notification_uuid, received_at, body, decoded)
            SELECT inserted.notification_uuid, inserted.received_at, staged.body, staged.decoded
            FROM inserted JOIN staged USING (notification_uuid)
            ORDER BY inserted.notification_uuid
        ), latest AS (
            SELECT DISTINCT ON (original_transaction_id) * FROM staged
            WHERE original_transaction_id IS NOT NULL AND signed_date IS NOT NULL
            ORDER BY original_transaction_id, signed_date DESC, notification_uuid DESC
        ), changed AS (
            INSERT INTO subscriptions AS current (
                original_transaction_id, last_notification_uuid, last_notification_type, last_subtype,
                last_signed_date, transaction_id, product_id, expires_date, auto_renew_status, revocation_date,
                environment, bundle_id, app_apple_id, status, grace_period_expires_date, auto_renew_product_id, price,
                currency, offer_type, entitled, entitled_until, updated_at
            )
            SELECT original_transaction_id, notification_uuid, notification_type, subtype,
                \(timestamp("signed_date")), transaction_id, product_id, \(timestamp("expires_date")),
                auto_renew_status, \(timestamp("revocation_date")), environment, bundle_id, app_apple_id, status,
                \(timestamp("grace_period_expires_date")), auto_renew_product_id, price, currency, offer_type,
                \(entitled(status: "status")), \(
                    entitledUntil(
                        status: "status",
                        expiresDate: timestamp("expires_date"),
                        gracePeriodExpiresDate: timestamp("grace_period_expires_date")
                    )
                ), now()
            FROM latest ORDER BY original_transaction_id
            ON CONFLICT (original_transaction_id) DO UPDATE SET
                last_notification_uuid = EXCLUDED.last_notification_uuid,
                last_notification_type = EXCLUDED.last_notification_type,
                last_subtype = EXCLUDED.last_subtype,
                last_signed_date = EXCLUDED.last_signed_date,
                transaction_id = EXCLUDED.transaction_id,
                product_id = EXCLUDED.product_id,
                expires_date = EXCLUDED.expires_date,
                auto_renew_status = EXCLUDED.auto_renew_status,
                revocation_date = EXCLUDED.revocation_date,
                environment = EXCLUDED.environment,
                bundle_id = EXCLUDED.bundle_id,
                app_apple_id = EXCLUDED.app_apple_id,
                status = EXCLUDED.status,
                grace_period_expires_date = EXCLUDED.grace_period_expires_date,
                auto_renew_product_id = EXCLUDED.auto_renew_product_id,
                price = EXCLUDED.price,
                currency = EXCLUDED.currency,
                offer_type = EXCLUDED.offer_type,
                entitled = EXCLUDED.entitled,
                entitled_until = EXCLUDED.entitled_until,
                updated_at = EXCLUDED.updated_at
            WHERE (current.last_signed_date, current.last_notification_uuid)
                < (EXCLUDED.last_signed_date, EXCLUDED.last_notification_uuid)
            RETURNING current.*
        ), decoded_outbox AS (
            INSERT INTO outbox (stream, message_key, notification_uuid, source_topic, source_partition)
            SELECT 'decoded', COALESCE(staged.original_transaction_id, staged.notification_uuid::text),
                staged.notification_uuid, staged.kafka_topic, staged.kafka_partition
            FROM inserted JOIN staged USING (notification_uuid)
            ORDER BY staged.ordinal
            RETURNING id, notification_uuid, message_key, source_topic, source_partition
        ), state_outbox AS (
            INSERT INTO outbox (
                stream, message_key, notification_uuid, subscription_state, source_topic, source_partition
            )
            SELECT 'subscription_state', changed.original_transaction_id, changed.last_notification_uuid,
                to_jsonb(changed), latest.kafka_topic, latest.kafka_partition
            FROM changed JOIN latest USING (original_transaction_id)
            ORDER BY latest.ordinal
            RETURNING id, notification_uuid, message_key, source_topic, source_partition, subscription_state
        )
        SELECT 'decoded' AS stream, id, notification_uuid, message_key, source_topic, source_partition,
            \(subscriptionColumns.map { "NULL::\($0.type)" }.joined(separator: ", ")), NULL::text
        FROM decoded_outbox
        UNION ALL
        SELECT 'subscription_state', state_outbox.id, state_outbox.notification_uuid, state_outbox.message_key,
            state_outbox.source_topic, state_outbox.source_partition, \(
                subscriptionColumns.map { "changed.\($0.name)" }.joined(separator: ", ")
            ), state_outbox.subscription_state::text
        FROM state_outbox JOIN changed ON changed.original_transaction_id = state_outbox.message_key
        ORDER BY 2
        """
    }

    /// The JWS headers to store, from two array parameters starting at `$first`: digests (`bytea[]`) and texts.
    static func headerSource(from first: Int) -> String {
        "unnest($\(first)::bytea[], $\(first + 1)::text[]) AS headers(digest, header)"
    }

    /// Before a batch's rows, in its transaction: stores the JWS headers its packed bodies refer to (each once, ever;
    /// digests in order, so that concurrent writers lock them in the same order), and makes sure the partitions of
    /// `notification_bodies` for its days' months and the months after exist.
    static let prepareBodies = """
        WITH stored_headers AS (
            INSERT INTO jws_headers (digest, header)
            SELECT digest, header FROM unnest($1::bytea[], $2::text[]) AS headers(digest, header) ORDER BY digest
            ON CONFLICT (digest) DO NOTHING
        )
        SELECT asnp_notification_bodies_partition(to_timestamp(day / 1000.0) + months * interval '1 month')
        FROM unnest($3::bigint[]) AS day, (VALUES (0), (1)) AS ahead(months)
        """

    /// Inserts rejected bodies (dedupe on their Kafka coordinates) and a dead-letter outbox row for each new one.
    static let writeRejected = """
        WITH inserted AS (
            INSERT INTO rejected_notifications (
                status, reason, body, headers, received_at, kafka_topic, kafka_partition, kafka_offset
            )
            SELECT status, reason, body, headers::jsonb, \(timestamp("received_at")), kafka_topic,
                kafka_partition, kafka_offset
            FROM unnest($1::integer[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::bigint[], $7::text[],
                $8::integer[], $9::bigint[]) AS rejected_input(ordinal, status, reason, body, headers,
                received_at, kafka_topic, kafka_partition, kafka_offset)
            ORDER BY ordinal
            ON CONFLICT (kafka_topic, kafka_partition, kafka_offset) DO NOTHING
            RETURNING id, kafka_topic, kafka_partition, kafka_offset
        )
        INSERT INTO outbox (stream, message_key, rejected_id, source_topic, source_partition)
        SELECT 'dead_letter', keys.message_key, inserted.id, inserted.kafka_topic, inserted.kafka_partition
        FROM inserted
        JOIN unnest($7::text[], $8::integer[], $9::bigint[], $10::text[])
            AS keys(kafka_topic, kafka_partition, kafka_offset, message_key)
            USING (kafka_topic, kafka_partition, kafka_offset)
        ORDER BY inserted.id
        RETURNING id, message_key, rejected_id, source_topic, source_partition
        """
}
