import PostgresRuntime

extension SchemaMigration {
    /// Version 5: what a subscription's newest notification says about the customer's access, from Apple's own
    /// fields: `status` (the notification's `data.status`), the renewal info's `gracePeriodExpiresDate` and
    /// `autoRenewProductId`, the transaction's `price`, `currency` and `offerType`, and `entitled` / `entitled_until`
    /// derived from them by the newest notification's status alone (superseded by version 8's rules). Rows already stored get them from their
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
                grace_period_expires_date = \(SchemaSQL.timestamp("(n.decoded #>> '{renewalInfo,gracePeriodExpiresDate}')::bigint")),
                auto_renew_product_id = n.decoded #>> '{renewalInfo,autoRenewProductId}',
                price = (n.decoded #>> '{transactionInfo,price}')::bigint,
                currency = n.decoded #>> '{transactionInfo,currency}',
                offer_type = (n.decoded #>> '{transactionInfo,offerType}')::smallint
            FROM notifications n
            WHERE n.notification_uuid = s.last_notification_uuid AND n.version = 2
            """,
            """
            UPDATE subscriptions SET
                entitled = \(entitled(status: "status")),
                entitled_until = \(
                    entitledUntil(
                        status: "status",
                        expiresDate: "expires_date",
                        gracePeriodExpiresDate: "grace_period_expires_date"
                    )
                )
            WHERE status IS NOT NULL
            """,
        ]
    )

    /// Version 5's rule, frozen with its migration (a released migration's text never changes): active or in the
    /// grace period; NULL without a known status.
    private static func entitled(status: String) -> String {
        "CASE \(status) WHEN 1 THEN true WHEN 4 THEN true WHEN 2 THEN false WHEN 3 THEN false WHEN 5 THEN false END"
    }

    /// Version 5's rule: the expiry while active, the grace period's end in a grace period.
    private static func entitledUntil(status: String, expiresDate: String, gracePeriodExpiresDate: String) -> String {
        "CASE \(status) WHEN 1 THEN \(expiresDate) WHEN 4 THEN \(gracePeriodExpiresDate) END"
    }
}
