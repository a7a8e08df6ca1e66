import NotificationSchema

/// The SQL of a batch write. The notifications' arrays first become one relation, `staged` (one row per consumed
/// notification, dates in milliseconds), and everything after it reads that.
package enum BatchStatements {
    /// The staged columns, in UNNEST order.
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
        ("state_date", "bigint"),
        ("carries_transaction", "boolean"),
        ("carries_renewal_info", "boolean"),
        ("purchase_date", "bigint"),
        ("product_type", "text"),
        ("revocation_reason", "smallint"),
        ("in_app_ownership_type", "text"),
        ("subscription_group_identifier", "text"),
        ("app_account_token", "text"),
        ("previous_original_transaction_id", "text"),
        ("renewal_date", "bigint"),
        ("is_in_billing_retry", "boolean"),
        ("expiration_intent", "smallint"),
        ("decoded", "jsonb"),
        ("body", "bytea"),
        ("received_at", "bigint"),
        ("kafka_topic", "text"),
        ("kafka_partition", "integer"),
        ("kafka_offset", "bigint"),
        ("trace_parent", "text"),
        ("trace_state", "text"),
    ]

    /// The statement's source: one array parameter per staged column.
    static let unnestSource = """
        unnest(\(
            stagedColumns.enumerated().map { "$\($0.offset + 1)::\($0.element.type)[]" }.joined(separator: ", ")
        )) AS staged_input(\(stagedColumns.map(\.name).joined(separator: ", ")))
        """

    /// The subscription columns the statement returns for changed states, in ``SubscriptionState`` order, with
    /// their types (for the rows of other streams, NULL of each type).
    static let subscriptionColumns: [(name: String, type: String)] = [
        ("original_transaction_id", "text"), ("last_notification_uuid", "uuid"), ("last_notification_type", "text"),
        ("last_subtype", "text"), ("last_signed_date", "timestamptz"), ("transaction_id", "text"),
        ("product_id", "text"), ("expires_date", "timestamptz"), ("auto_renew_status", "smallint"),
        ("revocation_date", "timestamptz"), ("environment", "text"), ("bundle_id", "text"), ("app_apple_id", "bigint"),
        ("status", "smallint"), ("grace_period_expires_date", "timestamptz"), ("auto_renew_product_id", "text"),
        ("price", "bigint"), ("currency", "text"), ("offer_type", "smallint"), ("entitled", "boolean"),
        ("entitled_until", "timestamptz"), ("updated_at", "timestamptz"), ("product_type", "text"),
        ("purchase_date", "timestamptz"), ("revocation_reason", "smallint"), ("in_app_ownership_type", "text"),
        ("subscription_group_identifier", "text"), ("app_account_token", "text"),
        ("previous_original_transaction_id", "text"), ("renewal_date", "timestamptz"),
        ("is_in_billing_retry", "boolean"), ("expiration_intent", "smallint"),
    ]

    /// Inserts new notifications (dedupe on notification_uuid, also within the batch), merges each subscription's
    /// notifications into its row by ``SubscriptionStateRules`` (each part newest wins), and writes outbox rows for
    /// what is new.
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
                original_transaction_id, transaction_id, product_id, \(SchemaSQL.timestamp("signed_date")),
                \(SchemaSQL.timestamp("expires_date")), \(SchemaSQL.timestamp("revocation_date")), auto_renew_status,
                \(SchemaSQL.timestamp("received_at")), kafka_topic, kafka_partition, kafka_offset
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
            WHERE original_transaction_id IS NOT NULL AND state_date IS NOT NULL
            ORDER BY original_transaction_id, state_date DESC, notification_uuid DESC
        ), latest_status AS (
            SELECT DISTINCT ON (original_transaction_id) original_transaction_id, status, state_date FROM staged
            WHERE original_transaction_id IS NOT NULL AND state_date IS NOT NULL AND status IS NOT NULL
            ORDER BY original_transaction_id, state_date DESC, notification_uuid DESC
        ), latest_renewal AS (
            SELECT DISTINCT ON (original_transaction_id) original_transaction_id, auto_renew_status,
                auto_renew_product_id, grace_period_expires_date, renewal_date, is_in_billing_retry, expiration_intent,
                state_date
            FROM staged
            WHERE original_transaction_id IS NOT NULL AND state_date IS NOT NULL AND carries_renewal_info
            ORDER BY original_transaction_id, state_date DESC, notification_uuid DESC
        ), latest_purchase AS (
            SELECT DISTINCT ON (original_transaction_id) original_transaction_id, transaction_id, product_id,
                product_type, purchase_date, expires_date, revocation_date, revocation_reason, price, currency,
                offer_type, in_app_ownership_type, state_date
            FROM staged
            WHERE original_transaction_id IS NOT NULL AND state_date IS NOT NULL AND carries_transaction
            ORDER BY original_transaction_id, purchase_date DESC NULLS LAST, state_date DESC, notification_uuid DESC
        ), kept AS (
            -- Set once per subscription: the batch's latest value that is there (SubscriptionStateRules.keptWhenAbsent).
            SELECT original_transaction_id,
                (array_agg(app_account_token ORDER BY purchase_date DESC NULLS LAST, state_date DESC)
                    FILTER (WHERE app_account_token IS NOT NULL))[1] AS app_account_token,
                (array_agg(subscription_group_identifier ORDER BY purchase_date DESC NULLS LAST, state_date DESC)
                    FILTER (WHERE subscription_group_identifier IS NOT NULL))[1] AS subscription_group_identifier,
                (array_agg(previous_original_transaction_id ORDER BY purchase_date DESC NULLS LAST, state_date DESC)
                    FILTER (WHERE previous_original_transaction_id IS NOT NULL))[1]
                    AS previous_original_transaction_id
            FROM staged
            WHERE original_transaction_id IS NOT NULL AND state_date IS NOT NULL AND carries_transaction
            GROUP BY original_transaction_id
        ), changed AS (
            INSERT INTO subscriptions AS current (
                \(SubscriptionStateRules.insertColumns)
            )
            SELECT latest.original_transaction_id, latest.notification_uuid, latest.notification_type,
                latest.subtype, \(SchemaSQL.timestamp("latest.state_date")), latest.environment, latest.bundle_id,
                latest.app_apple_id,
                s.status, \(SchemaSQL.timestamp("s.state_date")),
                r.auto_renew_status, r.auto_renew_product_id, \(SchemaSQL.timestamp("r.grace_period_expires_date")),
                \(SchemaSQL.timestamp("r.renewal_date")), r.is_in_billing_retry, r.expiration_intent,
                \(SchemaSQL.timestamp("r.state_date")),
                p.transaction_id, p.product_id, p.product_type, \(SchemaSQL.timestamp("p.purchase_date")),
                \(SchemaSQL.timestamp("p.expires_date")), \(SchemaSQL.timestamp("p.revocation_date")), p.revocation_reason, p.price,
                p.currency, p.offer_type, p.in_app_ownership_type, kept.subscription_group_identifier,
                kept.app_account_token, kept.previous_original_transaction_id, \(SchemaSQL.timestamp("p.state_date")),
                clock_timestamp()
            FROM latest
            LEFT JOIN latest_status s USING (original_transaction_id)
            LEFT JOIN latest_renewal r USING (original_transaction_id)
            LEFT JOIN latest_purchase p USING (original_transaction_id)
            LEFT JOIN kept USING (original_transaction_id)
            ORDER BY latest.original_transaction_id
            ON CONFLICT (original_transaction_id) DO UPDATE SET
                \(SubscriptionStateRules.mergeOnConflict.set)
            WHERE \(SubscriptionStateRules.mergeOnConflict.where)
            RETURNING current.*
        ), decoded_outbox AS (
            INSERT INTO outbox (
                stream, message_key, notification_uuid, source_topic, source_partition, trace_parent, trace_state
            )
            SELECT 'decoded', COALESCE(staged.original_transaction_id, staged.notification_uuid::text),
                staged.notification_uuid, staged.kafka_topic, staged.kafka_partition, staged.trace_parent,
                staged.trace_state
            FROM inserted JOIN staged USING (notification_uuid)
            ORDER BY staged.ordinal
            RETURNING id, notification_uuid, message_key, source_topic, source_partition, trace_parent, trace_state
        ), state_outbox AS (
            -- In the trace of the notification that made the state: the batch's latest of the subscription.
            INSERT INTO outbox (
                stream, message_key, notification_uuid, subscription_state, source_topic, source_partition,
                trace_parent, trace_state
            )
            SELECT 'subscription_state', changed.original_transaction_id, changed.last_notification_uuid,
                to_jsonb(changed), latest.kafka_topic, latest.kafka_partition, latest.trace_parent, latest.trace_state
            FROM changed JOIN latest USING (original_transaction_id)
            ORDER BY latest.ordinal
            RETURNING id, notification_uuid, message_key, source_topic, source_partition, subscription_state,
                trace_parent, trace_state
        )
        SELECT 'decoded' AS stream, id, notification_uuid, message_key, source_topic, source_partition,
            \(subscriptionColumns.map { "NULL::\($0.type)" }.joined(separator: ", ")), NULL::text, NULL::bigint,
            trace_parent, trace_state
        FROM decoded_outbox
        UNION ALL
        SELECT 'subscription_state', state_outbox.id, state_outbox.notification_uuid, state_outbox.message_key,
            state_outbox.source_topic, state_outbox.source_partition, \(
                subscriptionColumns.map { "changed.\($0.name)" }.joined(separator: ", ")
            ), state_outbox.subscription_state::text, \(stateVersion("changed")), state_outbox.trace_parent,
            state_outbox.trace_state
        FROM state_outbox JOIN changed ON changed.original_transaction_id = state_outbox.message_key
        ORDER BY 2
        """
    }

    /// A state's version (``OutboxMessage/StateEvent/version``) from the row `row` of `subscriptions`: its
    /// `updated_at` in microseconds since 1970, computed by PostgreSQL so that it compares exactly.
    static func stateVersion(_ row: String) -> String {
        "(extract(epoch FROM \(row).updated_at) * 1000000)::bigint"
    }

    /// The JWS headers to store, from two array parameters starting at `$first`: digests (`bytea[]`) and texts.
    static func headerSource(from first: Int) -> String {
        "unnest($\(first)::bytea[], $\(first + 1)::text[]) AS headers(digest, header)"
    }

    /// Stores JWS headers packed bodies refer to, each once ever; digests in order, so that concurrent writers lock
    /// them in the same order. (The notifications' statement stores its own; this is for the row-by-row path.)
    static let storeHeaders = """
        INSERT INTO jws_headers (digest, header)
        SELECT digest, header FROM \(headerSource(from: 1)) ORDER BY digest
        ON CONFLICT (digest) DO NOTHING
        """

    /// Inserts rejected bodies (dedupe on their Kafka coordinates) and a dead-letter outbox row for each new one.
    static let writeRejected = """
        WITH inserted AS (
            INSERT INTO rejected_notifications (
                status, reason, body, headers, received_at, kafka_topic, kafka_partition, kafka_offset
            )
            SELECT status, reason, body, headers::jsonb, \(SchemaSQL.timestamp("received_at")), kafka_topic,
                kafka_partition, kafka_offset
            FROM unnest($1::integer[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::bigint[], $7::text[],
                $8::integer[], $9::bigint[]) AS rejected_input(ordinal, status, reason, body, headers,
                received_at, kafka_topic, kafka_partition, kafka_offset)
            ORDER BY ordinal
            ON CONFLICT (kafka_topic, kafka_partition, kafka_offset) DO NOTHING
            RETURNING id, kafka_topic, kafka_partition, kafka_offset
        )
        INSERT INTO outbox (
            stream, message_key, rejected_id, source_topic, source_partition, trace_parent, trace_state
        )
        SELECT 'dead_letter', keys.message_key, inserted.id, inserted.kafka_topic, inserted.kafka_partition,
            keys.trace_parent, keys.trace_state
        FROM inserted
        JOIN unnest($7::text[], $8::integer[], $9::bigint[], $10::text[], $11::text[], $12::text[])
            AS keys(kafka_topic, kafka_partition, kafka_offset, message_key, trace_parent, trace_state)
            USING (kafka_topic, kafka_partition, kafka_offset)
        ORDER BY inserted.id
        RETURNING id, message_key, rejected_id, source_topic, source_partition, trace_parent, trace_state
        """

    /// The ownership fence, first in a worker's batch transaction: locks the batch's partitions' rows of
    /// `partition_owners` (in key order: the parameters are sorted) where the epoch is still the writer's and the
    /// database holds the partition through what the writer expects (a NULL expectation checks nothing; a NULL
    /// `stored_through_offset` holds nothing the writer expects), records the offsets stored through, and returns the
    /// partitions it found so (``NotificationStore/fence(_:on:logger:)``).
    static let fence = """
        UPDATE partition_owners AS owners
        SET stored_through_offset = GREATEST(owners.stored_through_offset, fence.next_offset)
        FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::bigint[], $5::bigint[])
            AS fence(kafka_topic, kafka_partition, epoch, next_offset, stored_through_offset)
        WHERE owners.kafka_topic = fence.kafka_topic AND owners.kafka_partition = fence.kafka_partition
            AND owners.epoch = fence.epoch
            AND (fence.stored_through_offset IS NULL OR owners.stored_through_offset >= fence.stored_through_offset)
        RETURNING owners.kafka_topic, owners.kafka_partition
        """

    /// The rows of some partitions (parameters: topics, partitions): to tell, for those a fence refused, a claim by
    /// another writer from a database behind the writer, and for a worker's periodic check.
    static let owners = """
        SELECT owners.kafka_topic, owners.kafka_partition, owners.epoch, owners.stored_through_offset
        FROM partition_owners AS owners
        JOIN unnest($1::text[], $2::integer[]) AS refused(kafka_topic, kafka_partition)
            USING (kafka_topic, kafka_partition)
        """
}
