/// SQL that takes a migrated test database back to before a migration, for tests that re-run it on rows an earlier
/// version wrote.
package enum SchemaRollback {
    /// `subscriptions` as before version 8 (subscription state rules): plain `entitled` and `entitled_until`
    /// columns, none of the customer, renewal and part columns, no access views; version 8 unrecorded. The
    /// values already in the rows stay as they are: tests then set them as the earlier writer did.
    package static let subscriptionStateRules = """
        DROP VIEW customer_access;
        DROP VIEW subscription_access;
        DROP INDEX subscriptions_app_account_token_idx;
        ALTER TABLE subscriptions ADD COLUMN plain_entitled boolean, ADD COLUMN plain_entitled_until timestamptz;
        UPDATE subscriptions SET plain_entitled = entitled, plain_entitled_until = entitled_until;
        ALTER TABLE subscriptions DROP COLUMN entitled, DROP COLUMN entitled_until, DROP COLUMN product_type,
            DROP COLUMN purchase_date, DROP COLUMN revocation_reason, DROP COLUMN in_app_ownership_type,
            DROP COLUMN subscription_group_identifier, DROP COLUMN app_account_token,
            DROP COLUMN previous_original_transaction_id, DROP COLUMN renewal_date, DROP COLUMN is_in_billing_retry,
            DROP COLUMN expiration_intent, DROP COLUMN status_signed_date, DROP COLUMN renewal_signed_date,
            DROP COLUMN purchase_signed_date;
        ALTER TABLE subscriptions RENAME COLUMN plain_entitled TO entitled;
        ALTER TABLE subscriptions RENAME COLUMN plain_entitled_until TO entitled_until;
        DELETE FROM asnp_schema_migrations WHERE version = 8;
        """

    /// After ``subscriptionStateRules``: every subscription as the writer before version 8 left it, all of its
    /// columns from its newest notification (by signed date) and access from that notification's status alone.
    package static let subscriptionsAsBeforeStateRules = """
        UPDATE subscriptions s SET
            transaction_id = n.transaction_id, product_id = n.product_id, expires_date = n.expires_date,
            revocation_date = n.revocation_date, auto_renew_status = n.auto_renew_status,
            status = (n.decoded #>> '{payload,data,status}')::smallint,
            grace_period_expires_date = timestamptz 'epoch'
                + (n.decoded #>> '{renewalInfo,gracePeriodExpiresDate}')::bigint * interval '1 millisecond',
            auto_renew_product_id = n.decoded #>> '{renewalInfo,autoRenewProductId}',
            price = (n.decoded #>> '{transactionInfo,price}')::bigint,
            currency = n.decoded #>> '{transactionInfo,currency}',
            offer_type = (n.decoded #>> '{transactionInfo,offerType}')::smallint
        FROM notifications_decoded n WHERE n.notification_uuid = s.last_notification_uuid;
        UPDATE subscriptions SET
            entitled = CASE status WHEN 1 THEN true WHEN 4 THEN true WHEN 2 THEN false WHEN 3 THEN false
                WHEN 5 THEN false END,
            entitled_until = CASE status WHEN 1 THEN expires_date WHEN 4 THEN grace_period_expires_date END;
        """
}
