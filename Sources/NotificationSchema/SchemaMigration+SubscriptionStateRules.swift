import PostgresRuntime

extension SchemaMigration {
    /// Version 8: `subscriptions` by ``SubscriptionStateRules``: the row merged from four parts (newest
    /// notification, status, renewal info, current purchase), the customer's columns (`app_account_token`,
    /// `in_app_ownership_type`, `subscription_group_identifier`, `previous_original_transaction_id`), and
    /// `entitled` / `entitled_until` as generated columns, so every row answers by the same rule.
    ///
    /// Rows already stored are rebuilt from their stored notifications' decoded JSON (where retention kept it), V1
    /// subscriptions get rows (V1 has no signed date: ordered as the writer orders them, by the latest moment each
    /// notification reports), and every subscription gets a state event in the outbox: the compacted state topic
    /// then carries the corrected states. Two views answer "does this customer have access now": `subscription_access` per subscription,
    /// `customer_access` per app account token and subscription group.
    ///
    /// A worker of an earlier version writes `entitled` itself, which a generated column refuses: its batches fail
    /// and are retried until it is replaced, storing nothing wrong meanwhile.
    static let subscriptionStateRules = SchemaMigration(
        version: 8,
        name: "subscription state rules",
        statements: [
            """
            ALTER TABLE subscriptions
                ADD COLUMN product_type text,
                ADD COLUMN purchase_date timestamptz,
                ADD COLUMN revocation_reason smallint,
                ADD COLUMN in_app_ownership_type text,
                ADD COLUMN subscription_group_identifier text,
                ADD COLUMN app_account_token text,
                ADD COLUMN previous_original_transaction_id text,
                ADD COLUMN renewal_date timestamptz,
                ADD COLUMN is_in_billing_retry boolean,
                ADD COLUMN expiration_intent smallint,
                ADD COLUMN status_signed_date timestamptz,
                ADD COLUMN renewal_signed_date timestamptz,
                ADD COLUMN purchase_signed_date timestamptz
            """,
            // Rows whose notifications' JSON retention dropped keep what their newest notification said. Every row
            // gets a new version (updated_at), so a state published before the migration is not taken as current.
            """
            UPDATE subscriptions SET
                updated_at = clock_timestamp(),
                status_signed_date = CASE WHEN status IS NOT NULL THEN last_signed_date END,
                renewal_signed_date = CASE
                    WHEN auto_renew_status IS NOT NULL OR auto_renew_product_id IS NOT NULL THEN last_signed_date END,
                purchase_signed_date = CASE WHEN transaction_id IS NOT NULL THEN last_signed_date END
            """,
            """
            UPDATE subscriptions s SET status = part.status, status_signed_date = part.signed_date
            FROM (
                SELECT DISTINCT ON (original_transaction_id) original_transaction_id, signed_date,
                    \(jsonSmallint("decoded #> '{payload,data,status}'")) AS status
                FROM notifications_decoded
                WHERE version = 2 AND original_transaction_id IS NOT NULL AND signed_date IS NOT NULL
                    AND \(jsonSmallint("decoded #> '{payload,data,status}'")) IS NOT NULL
                ORDER BY original_transaction_id, signed_date DESC, notification_uuid DESC
            ) part
            WHERE part.original_transaction_id = s.original_transaction_id
            """,
            """
            UPDATE subscriptions s SET
                auto_renew_status = \(jsonSmallint("part.info -> 'autoRenewStatus'")),
                auto_renew_product_id = part.info ->> 'autoRenewProductId',
                grace_period_expires_date = \(SchemaSQL.timestamp("(part.info ->> 'gracePeriodExpiresDate')::bigint")),
                renewal_date = \(SchemaSQL.timestamp("(part.info ->> 'renewalDate')::bigint")),
                is_in_billing_retry = (part.info ->> 'isInBillingRetryPeriod')::boolean,
                expiration_intent = \(jsonSmallint("part.info -> 'expirationIntent'")),
                renewal_signed_date = part.signed_date
            FROM (
                SELECT DISTINCT ON (original_transaction_id) original_transaction_id, signed_date,
                    decoded -> 'renewalInfo' AS info
                FROM notifications_decoded
                WHERE version = 2 AND original_transaction_id IS NOT NULL AND signed_date IS NOT NULL
                    AND jsonb_typeof(decoded -> 'renewalInfo') = 'object'
                ORDER BY original_transaction_id, signed_date DESC, notification_uuid DESC
            ) part
            WHERE part.original_transaction_id = s.original_transaction_id
            """,
            """
            UPDATE subscriptions s SET
                transaction_id = part.info ->> 'transactionId',
                product_id = part.info ->> 'productId',
                product_type = part.info ->> 'type',
                purchase_date = \(SchemaSQL.timestamp("(part.info ->> 'purchaseDate')::bigint")),
                expires_date = \(SchemaSQL.timestamp("(part.info ->> 'expiresDate')::bigint")),
                revocation_date = \(SchemaSQL.timestamp("(part.info ->> 'revocationDate')::bigint")),
                revocation_reason = \(jsonSmallint("part.info -> 'revocationReason'")),
                price = (part.info ->> 'price')::bigint,
                currency = part.info ->> 'currency',
                offer_type = \(jsonSmallint("part.info -> 'offerType'")),
                in_app_ownership_type = part.info ->> 'inAppOwnershipType',
                purchase_signed_date = part.signed_date
            FROM (
                SELECT DISTINCT ON (original_transaction_id) original_transaction_id, signed_date,
                    decoded -> 'transactionInfo' AS info
                FROM notifications_decoded
                WHERE version = 2 AND original_transaction_id IS NOT NULL AND signed_date IS NOT NULL
                    AND jsonb_typeof(decoded -> 'transactionInfo') = 'object'
                ORDER BY original_transaction_id, (decoded #>> '{transactionInfo,purchaseDate}')::bigint DESC NULLS LAST,
                    signed_date DESC, notification_uuid DESC
            ) part
            WHERE part.original_transaction_id = s.original_transaction_id
            """,
            """
            UPDATE subscriptions s SET
                app_account_token = part.app_account_token,
                subscription_group_identifier = part.subscription_group_identifier,
                previous_original_transaction_id = part.previous_original_transaction_id
            FROM (
                SELECT original_transaction_id,
                    (array_agg(COALESCE(decoded #>> '{transactionInfo,appAccountToken}',
                        decoded #>> '{renewalInfo,appAccountToken}') ORDER BY signed_date DESC)
                        FILTER (WHERE COALESCE(decoded #>> '{transactionInfo,appAccountToken}',
                            decoded #>> '{renewalInfo,appAccountToken}') IS NOT NULL))[1] AS app_account_token,
                    (array_agg(decoded #>> '{transactionInfo,subscriptionGroupIdentifier}' ORDER BY signed_date DESC)
                        FILTER (WHERE decoded #>> '{transactionInfo,subscriptionGroupIdentifier}' IS NOT NULL))[1]
                        AS subscription_group_identifier,
                    (array_agg(decoded #>> '{transactionInfo,previousOriginalTransactionId}' ORDER BY signed_date DESC)
                        FILTER (WHERE decoded #>> '{transactionInfo,previousOriginalTransactionId}' IS NOT NULL))[1]
                        AS previous_original_transaction_id
                FROM notifications_decoded
                WHERE version = 2 AND original_transaction_id IS NOT NULL AND signed_date IS NOT NULL
                GROUP BY original_transaction_id
            ) part
            WHERE part.original_transaction_id = s.original_transaction_id
            """,
            """
            ALTER TABLE subscriptions
                DROP COLUMN entitled,
                DROP COLUMN entitled_until,
                ADD COLUMN entitled boolean GENERATED ALWAYS AS (\(SubscriptionStateRules.entitled)) STORED,
                ADD COLUMN entitled_until timestamptz GENERATED ALWAYS AS (\(SubscriptionStateRules.entitledUntil)) STORED
            """,
            // V1 notifications stored without a top-level original_transaction_id were keyed by the receipt's first
            // entry, possibly another subscription's: keyed again as the writer now keys them.
            """
            UPDATE notifications n SET original_transaction_id = resolved.id
            FROM (
                SELECT notification_uuid, \(v1OriginalTransactionId("decoded")) AS id
                FROM notifications_decoded
                WHERE version = 1 AND jsonb_typeof(decoded) = 'object'
            ) resolved
            WHERE n.notification_uuid = resolved.notification_uuid AND n.version = 1
                AND n.original_transaction_id IS DISTINCT FROM resolved.id
            """,
            // V1 subscriptions, which no earlier version gave a row: the writer's V1 rules
            // (StatusUpdateNotification+Subscription) in SQL, merged as the writer merges.
            """
            WITH v1 AS (
                SELECT notification_uuid, original_transaction_id AS otid, decoded AS body, notification_type, subtype,
                    environment, bundle_id, app_apple_id, kafka_topic, kafka_partition
                FROM notifications_decoded
                WHERE version = 1 AND original_transaction_id IS NOT NULL AND jsonb_typeof(decoded) = 'object'
            ), entries AS (
                SELECT v1.notification_uuid, e AS entry
                FROM v1, jsonb_array_elements(CASE
                    WHEN jsonb_typeof(v1.body #> '{unified_receipt,latest_receipt_info}') = 'array'
                    THEN v1.body #> '{unified_receipt,latest_receipt_info}' ELSE '[]' END) e
                WHERE e ->> 'original_transaction_id' = v1.otid
                UNION ALL
                SELECT v1.notification_uuid, v1.body -> member
                FROM v1, unnest(ARRAY['latest_receipt_info', 'latest_expired_receipt_info']) member
                WHERE jsonb_typeof(v1.body -> member) = 'object'
                    AND v1.body -> member ->> 'original_transaction_id' = v1.otid
            ), current_entry AS (
                SELECT DISTINCT ON (notification_uuid) notification_uuid, entry FROM entries
                ORDER BY notification_uuid, \(v1Milliseconds("entry ->> 'purchase_date_ms'")) DESC NULLS LAST,
                    \(v1Milliseconds("entry ->> 'expires_date_ms'")) DESC NULLS LAST
            ), renewal AS (
                SELECT DISTINCT ON (v1.notification_uuid) v1.notification_uuid, r AS info
                FROM v1, jsonb_array_elements(CASE
                    WHEN jsonb_typeof(v1.body #> '{unified_receipt,pending_renewal_info}') = 'array'
                    THEN v1.body #> '{unified_receipt,pending_renewal_info}' ELSE '[]' END) WITH ORDINALITY AS p(r, i)
                WHERE r ->> 'original_transaction_id' = v1.otid
                ORDER BY v1.notification_uuid, i
            ), facts AS (
                SELECT v1.*, c.entry, r.info, GREATEST(
                    (SELECT max(GREATEST(\(v1Milliseconds("e.entry ->> 'purchase_date_ms'")),
                        \(v1Milliseconds("e.entry ->> 'cancellation_date_ms'"))))
                        FROM entries e WHERE e.notification_uuid = v1.notification_uuid),
                    \(v1Milliseconds("v1.body ->> 'auto_renew_status_change_date_ms'")),
                    \(v1Milliseconds("v1.body ->> 'cancellation_date_ms'")),
                    CASE WHEN r.info ->> 'is_in_billing_retry_period' = '1'
                        OR jsonb_typeof(r.info -> 'expiration_intent') IN ('string', 'number')
                        OR jsonb_typeof(v1.body -> 'expiration_intent') IN ('string', 'number')
                        THEN \(v1Milliseconds("c.entry ->> 'expires_date_ms'")) END
                ) AS state_date
                FROM v1 LEFT JOIN current_entry c USING (notification_uuid) LEFT JOIN renewal r USING (notification_uuid)
            ), latest AS (
                SELECT DISTINCT ON (otid) * FROM facts WHERE state_date IS NOT NULL
                ORDER BY otid, state_date DESC, notification_uuid DESC
            ), latest_renewal AS (
                SELECT DISTINCT ON (otid) otid, body, info, state_date FROM facts
                WHERE state_date IS NOT NULL AND info IS NOT NULL
                ORDER BY otid, state_date DESC, notification_uuid DESC
            ), latest_purchase AS (
                SELECT DISTINCT ON (otid) otid, entry, state_date FROM facts
                WHERE state_date IS NOT NULL AND entry IS NOT NULL
                ORDER BY otid, \(v1Milliseconds("entry ->> 'purchase_date_ms'")) DESC NULLS LAST, state_date DESC,
                    notification_uuid DESC
            ), kept AS (
                SELECT otid, (array_agg(entry ->> 'app_account_token'
                        ORDER BY \(v1Milliseconds("entry ->> 'purchase_date_ms'")) DESC NULLS LAST, state_date DESC)
                        FILTER (WHERE entry ->> 'app_account_token' IS NOT NULL))[1] AS app_account_token,
                    (array_agg(entry ->> 'subscription_group_identifier'
                        ORDER BY \(v1Milliseconds("entry ->> 'purchase_date_ms'")) DESC NULLS LAST, state_date DESC)
                        FILTER (WHERE entry ->> 'subscription_group_identifier' IS NOT NULL))[1]
                        AS subscription_group_identifier
                FROM facts WHERE state_date IS NOT NULL AND entry IS NOT NULL
                GROUP BY otid
            )
            INSERT INTO subscriptions AS current (
                \(SubscriptionStateRules.insertColumns)
            )
            SELECT latest.otid, latest.notification_uuid, latest.notification_type, latest.subtype,
                \(SchemaSQL.timestamp("latest.state_date")), latest.environment, latest.bundle_id,
                latest.app_apple_id,
                NULL, NULL,
                COALESCE(CASE r.info ->> 'auto_renew_status' WHEN '0' THEN 0 WHEN '1' THEN 1 END,
                    CASE r.body ->> 'auto_renew_status' WHEN 'false' THEN 0 WHEN 'true' THEN 1 END),
                COALESCE(r.info ->> 'auto_renew_product_id', r.body ->> 'auto_renew_product_id'),
                \(SchemaSQL.timestamp(v1Milliseconds("r.info ->> 'grace_period_expires_date_ms'"))), NULL,
                CASE WHEN r.info ->> 'is_in_billing_retry_period' IS NOT NULL
                    THEN r.info ->> 'is_in_billing_retry_period' = '1' END,
                CASE WHEN COALESCE(r.info ->> 'expiration_intent', r.body ->> 'expiration_intent') ~ '^-?[0-9]{1,4}$'
                    THEN COALESCE(r.info ->> 'expiration_intent', r.body ->> 'expiration_intent')::smallint END,
                \(SchemaSQL.timestamp("r.state_date")),
                p.entry ->> 'transaction_id', p.entry ->> 'product_id',
                CASE WHEN \(v1Milliseconds("p.entry ->> 'expires_date_ms'")) IS NOT NULL
                    THEN 'Auto-Renewable Subscription' END,
                \(SchemaSQL.timestamp(v1Milliseconds("p.entry ->> 'purchase_date_ms'"))),
                \(SchemaSQL.timestamp(v1Milliseconds("p.entry ->> 'expires_date_ms'"))),
                \(SchemaSQL.timestamp(v1Milliseconds("p.entry ->> 'cancellation_date_ms'"))),
                CASE WHEN p.entry ->> 'cancellation_reason' ~ '^-?[0-9]{1,4}$'
                    THEN (p.entry ->> 'cancellation_reason')::smallint END,
                NULL, NULL, NULL, p.entry ->> 'in_app_ownership_type', kept.subscription_group_identifier,
                kept.app_account_token, NULL, \(SchemaSQL.timestamp("p.state_date")),
                clock_timestamp()
            FROM latest
            LEFT JOIN latest_renewal r USING (otid)
            LEFT JOIN latest_purchase p USING (otid)
            LEFT JOIN kept USING (otid)
            ORDER BY latest.otid
            ON CONFLICT (original_transaction_id) DO UPDATE SET
                \(SubscriptionStateRules.mergeOnConflict.set)
            WHERE \(SubscriptionStateRules.mergeOnConflict.where)
            """,
            """
            CREATE INDEX subscriptions_app_account_token_idx ON subscriptions (app_account_token)
                WHERE app_account_token IS NOT NULL
            """,
            """
            CREATE VIEW subscription_access AS
            SELECT original_transaction_id, app_account_token, subscription_group_identifier, product_id, product_type,
                in_app_ownership_type, environment, bundle_id, status, entitled, entitled_until,
                \(SubscriptionStateRules.accessNow) AS has_access
            FROM subscriptions
            """,
            """
            CREATE VIEW customer_access AS
            SELECT app_account_token, subscription_group_identifier, bool_or(has_access) AS has_access,
                array_agg(original_transaction_id ORDER BY original_transaction_id) FILTER (WHERE has_access)
                    AS entitled_original_transaction_ids,
                array_agg(original_transaction_id ORDER BY original_transaction_id) AS original_transaction_ids
            FROM subscription_access
            WHERE app_account_token IS NOT NULL
            GROUP BY app_account_token, subscription_group_identifier
            """,
            // Every state changed shape (new columns), many changed value: publish each again, from the worker
            // that owns its newest notification's raw partition.
            """
            INSERT INTO outbox (stream, message_key, notification_uuid, source_topic, source_partition)
            SELECT 'subscription_state', s.original_transaction_id, s.last_notification_uuid, n.kafka_topic,
                n.kafka_partition
            FROM subscriptions s JOIN notifications n ON n.notification_uuid = s.last_notification_uuid
            ORDER BY n.kafka_topic, n.kafka_partition, n.kafka_offset
            """,
        ]
    )

    /// A V1 `_ms` text as a bigint, NULL when it is not an integer (as the writer's `Int64(text)` reads it).
    private static func v1Milliseconds(_ text: String) -> String {
        "(CASE WHEN \(text) ~ '^[-+]?[0-9]{1,18}$' THEN (\(text))::bigint END)"
    }

    /// The writer's V1 key (``StatusUpdateNotification/resolvedOriginalTransactionId``) of a V1 body `body`
    /// (jsonb), in SQL: the top-level id; else the deprecated receipt object's; else the latest receipt entry of
    /// the notification's product; else the pending renewal of that product; else the receipt's only subscription.
    private static func v1OriginalTransactionId(_ body: String) -> String {
        let products = """
            (\(body) ->> 'auto_renew_product_id', \(body) #>> '{latest_receipt_info,product_id}',
                \(body) #>> '{latest_expired_receipt_info,product_id}')
            """
        let entries = """
            jsonb_array_elements(CASE WHEN jsonb_typeof(\(body) #> '{unified_receipt,latest_receipt_info}') = 'array'
                THEN \(body) #> '{unified_receipt,latest_receipt_info}' ELSE '[]' END) WITH ORDINALITY AS entry(e, i)
            """
        let renewals = """
            jsonb_array_elements(CASE WHEN jsonb_typeof(\(body) #> '{unified_receipt,pending_renewal_info}') = 'array'
                THEN \(body) #> '{unified_receipt,pending_renewal_info}' ELSE '[]' END) WITH ORDINALITY AS renewal(r, i)
            """
        return """
            COALESCE(
                NULLIF(\(body) ->> 'original_transaction_id', ''),
                NULLIF(COALESCE(\(body) #>> '{latest_receipt_info,original_transaction_id}',
                    \(body) #>> '{latest_expired_receipt_info,original_transaction_id}'), ''),
                (SELECT e ->> 'original_transaction_id' FROM \(entries)
                    WHERE e ->> 'product_id' IN \(products) AND NULLIF(e ->> 'original_transaction_id', '') IS NOT NULL
                    ORDER BY \(v1Milliseconds("e ->> 'purchase_date_ms'")) DESC NULLS LAST, i LIMIT 1),
                (SELECT r ->> 'original_transaction_id' FROM \(renewals)
                    WHERE (r ->> 'auto_renew_product_id' IN \(products) OR r ->> 'product_id' IN \(products))
                        AND NULLIF(r ->> 'original_transaction_id', '') IS NOT NULL
                    ORDER BY i LIMIT 1),
                (SELECT min(id) FROM (
                    SELECT NULLIF(e ->> 'original_transaction_id', '') AS id FROM \(entries)
                    UNION SELECT NULLIF(r ->> 'original_transaction_id', '') FROM \(renewals)
                ) named HAVING count(DISTINCT id) = 1)
            )
            """
    }

    /// A JSON number `value` (jsonb) as a smallint, NULL when it is none or does not fit, as the writer's
    /// `Int16(exactly:)` reads it: a value Apple sent out of range must not stop the migration.
    private static func jsonSmallint(_ value: String) -> String {
        """
        (CASE WHEN jsonb_typeof(\(value)) = 'number' AND (\(value))::numeric = trunc((\(value))::numeric)
            AND (\(value))::numeric BETWEEN -32768 AND 32767 THEN (\(value))::numeric::smallint END)
        """
    }
}
