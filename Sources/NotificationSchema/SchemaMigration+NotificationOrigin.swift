import PostgresRuntime

extension SchemaMigration {
    /// Version 4: V2 notifications without a `data` member (SUMMARY, EXTERNAL_PURCHASE_TOKEN, app data) were stored
    /// with NULL `environment`, `bundle_id` and `app_apple_id`, although their own member names them. This fills them
    /// from the stored `decoded` JSON the way the writer now reads them (``ResponseBodyV2DecodedPayload/origin``):
    /// `summary`, then `externalPurchaseToken` (its environment from the `SANDBOX` prefix of its id), then `appData`.
    /// One pass over the rows without `data`; rows of other shapes are not touched. Decoded events still waiting in
    /// the outbox without a key (a notification without a transaction) get the key the writer now gives them.
    static let notificationOrigin = SchemaMigration(
        version: 4,
        name: "environment, bundle id and app Apple id of every V2 shape",
        statements: [
            """
            UPDATE notifications SET
                environment = COALESCE(environment, CASE
                    WHEN decoded #> '{payload,summary}' IS NOT NULL
                        THEN decoded #>> '{payload,summary,environment}'
                    WHEN decoded #> '{payload,externalPurchaseToken}' IS NOT NULL
                        THEN CASE WHEN decoded #>> '{payload,externalPurchaseToken,externalPurchaseId}' LIKE 'SANDBOX%'
                            THEN 'Sandbox' ELSE 'Production' END
                    WHEN decoded #> '{payload,appData}' IS NOT NULL
                        THEN decoded #>> '{payload,appData,environment}'
                END),
                bundle_id = COALESCE(
                    bundle_id,
                    decoded #>> '{payload,summary,bundleId}',
                    decoded #>> '{payload,externalPurchaseToken,bundleId}',
                    decoded #>> '{payload,appData,bundleId}'
                ),
                app_apple_id = COALESCE(
                    app_apple_id,
                    (decoded #>> '{payload,summary,appAppleId}')::bigint,
                    (decoded #>> '{payload,externalPurchaseToken,appAppleId}')::bigint,
                    (decoded #>> '{payload,appData,appAppleId}')::bigint
                )
            WHERE version = 2 AND decoded #> '{payload,data}' IS NULL
                AND (environment IS NULL OR bundle_id IS NULL OR app_apple_id IS NULL)
            """,
            """
            UPDATE outbox SET message_key = notification_uuid::text
            WHERE stream = 'decoded' AND message_key IS NULL AND notification_uuid IS NOT NULL
            """,
        ]
    )
}
