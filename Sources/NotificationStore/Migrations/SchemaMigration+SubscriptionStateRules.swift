extension SchemaMigration {
    /// Version 8: `subscriptions` by ``SubscriptionStateRules``: the row merged from four parts (newest
    /// notification, status, renewal info, current purchase), the customer's columns (`app_account_token`,
    /// `in_app_ownership_type`, `subscription_group_identifier`, `previous_original_transaction_id`), and
    /// `entitled` / `entitled_until` as generated columns, so every row answers by the same rule.
    ///
    /// Rows already stored are rebuilt from their stored notifications' decoded JSON (where retention kept it), and
    /// every subscription gets a state event in the outbox: the compacted state topic then carries the corrected
    /// states. Two views answer "does this customer have access now": `subscription_access` per subscription,
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
            // Rows whose notifications' JSON retention dropped keep what their newest notification said.
            """
            UPDATE subscriptions SET
                status_signed_date = CASE WHEN status IS NOT NULL THEN last_signed_date END,
                renewal_signed_date = CASE
                    WHEN auto_renew_status IS NOT NULL OR auto_renew_product_id IS NOT NULL THEN last_signed_date END,
                purchase_signed_date = CASE WHEN transaction_id IS NOT NULL THEN last_signed_date END
            """,
            """
            UPDATE subscriptions s SET status = part.status, status_signed_date = part.signed_date
            FROM (
                SELECT DISTINCT ON (original_transaction_id) original_transaction_id, signed_date,
                    (decoded #>> '{payload,data,status}')::smallint AS status
                FROM notifications_decoded
                WHERE version = 2 AND original_transaction_id IS NOT NULL AND signed_date IS NOT NULL
                    AND jsonb_typeof(decoded #> '{payload,data,status}') = 'number'
                ORDER BY original_transaction_id, signed_date DESC, notification_uuid DESC
            ) part
            WHERE part.original_transaction_id = s.original_transaction_id
            """,
            """
            UPDATE subscriptions s SET
                auto_renew_status = (part.info ->> 'autoRenewStatus')::smallint,
                auto_renew_product_id = part.info ->> 'autoRenewProductId',
                grace_period_expires_date = \(BatchStatements.timestamp("(part.info ->> 'gracePeriodExpiresDate')::bigint")),
                renewal_date = \(BatchStatements.timestamp("(part.info ->> 'renewalDate')::bigint")),
                is_in_billing_retry = (part.info ->> 'isInBillingRetryPeriod')::boolean,
                expiration_intent = (part.info ->> 'expirationIntent')::smallint,
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
                purchase_date = \(BatchStatements.timestamp("(part.info ->> 'purchaseDate')::bigint")),
                expires_date = \(BatchStatements.timestamp("(part.info ->> 'expiresDate')::bigint")),
                revocation_date = \(BatchStatements.timestamp("(part.info ->> 'revocationDate')::bigint")),
                revocation_reason = (part.info ->> 'revocationReason')::smallint,
                price = (part.info ->> 'price')::bigint,
                currency = part.info ->> 'currency',
                offer_type = (part.info ->> 'offerType')::smallint,
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
}
