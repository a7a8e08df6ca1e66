extension SchemaMigration {
    /// Version 5: what a subscription's newest notification says about the customer's access, from Apple's own
    /// fields: `status` (the notification's `data.status`), the renewal info's `gracePeriodExpiresDate` and
    /// `autoRenewProductId`, the transaction's `price`, `currency` and `offerType`, and `entitled` / `entitled_until`
    /// derived from them as Apple documents (``BatchStatements/entitled``). Rows already stored get them from their
    /// newest notification's `decoded` JSON, in one pass.
    static let subscriptionEntitlement = SchemaMigration(
        version: 5,
        name: "subscription status and entitlement",
        statements: [
            """
            ALTER TABLE subscriptions
                ADD COLUMN status smallint,
                ADD COLUMN grace_period_expires_date timestamptz,
                ADD COLUMN auto_renew_product_id text,
                ADD COLUMN price bigint,
                ADD COLUMN currency text,
                ADD COLUMN offer_type smallint,
                ADD COLUMN entitled boolean,
                ADD COLUMN entitled_until timestamptz
            """,
            """
            UPDATE subscriptions s SET
                status = (n.decoded #>> '{payload,data,status}')::smallint,
                grace_period_expires_date = \(BatchStatements.timestamp("(n.decoded #>> '{renewalInfo,gracePeriodExpiresDate}')::bigint")),
                auto_renew_product_id = n.decoded #>> '{renewalInfo,autoRenewProductId}',
                price = (n.decoded #>> '{transactionInfo,price}')::bigint,
                currency = n.decoded #>> '{transactionInfo,currency}',
                offer_type = (n.decoded #>> '{transactionInfo,offerType}')::smallint
            FROM notifications n
            WHERE n.notification_uuid = s.last_notification_uuid AND n.version = 2
            """,
            """
            UPDATE subscriptions SET
                entitled = \(BatchStatements.entitled(status: "status")),
                entitled_until = \(
                    BatchStatements.entitledUntil(
                        status: "status",
                        expiresDate: "expires_date",
                        gracePeriodExpiresDate: "grace_period_expires_date"
                    )
                )
            WHERE status IS NOT NULL
            """,
        ]
    )
}
