/// How a row of `subscriptions` follows from its subscription's notifications: the rules downstream teams decide
/// access from, in one place. Docs/entitlement.md has them as a table per notification type, each rule beside the
/// Apple documentation it comes from.
///
/// A row is the merge of four parts, each taken from the notification that is newest *for that part*, so that the
/// row does not depend on the order notifications arrive in (Apple delivers in no order) nor on how they fall into
/// batches:
///
/// - ``notification``: the newest notification by (`signedDate`, `notificationUUID`): its type, subtype, date.
/// - ``status``: Apple's `data.status`, "current as of the signedDate", from the newest notification carrying one.
/// - ``renewal``: the renewal info (`signedRenewalInfo`), from the newest notification carrying one: it describes
///   the whole subscription (`renewalDate` is when its most recent purchase expires), whichever transaction the
///   notification is about.
/// - ``purchase``: the current purchase, from the transaction with the latest `purchaseDate` (then the newest
///   notification about it). A notification about an earlier transaction (a refund or consumption request about a
///   past renewal, the plan before an upgrade) never rewinds it; the newest word about the current transaction
///   (its refund, the refund reversed, an extended expiry) does replace it.
///
/// A part the notification lacks leaves the part as it was. Within a part a field the newest carrier lacks is
/// absent by Apple's meaning (no grace period, no offer, not revoked), except the few that Apple sets once per
/// subscription and may leave out later (``keptWhenAbsent``): those keep their earlier value.
///
/// `entitled` and `entitled_until` are generated columns over the merged row (``entitled`` and ``entitledUntil``),
/// so every row, old or new, answers by the same rule.
package enum SubscriptionStateRules {
    /// One part of a row: its columns and the column that records the signed date of the notification it came from.
    struct Part: Sendable {
        var columns: [String]
        /// The signed date of the notification the part came from; NULL while no notification carried it.
        var signedDateColumn: String
    }

    static let status = Part(columns: ["status"], signedDateColumn: "status_signed_date")

    static let renewal = Part(
        columns: [
            "auto_renew_status", "auto_renew_product_id", "grace_period_expires_date", "renewal_date",
            "is_in_billing_retry", "expiration_intent",
        ],
        signedDateColumn: "renewal_signed_date"
    )

    static let purchase = Part(
        columns: [
            "transaction_id", "product_id", "product_type", "purchase_date", "expires_date", "revocation_date",
            "revocation_reason", "price", "currency", "offer_type", "in_app_ownership_type",
            "subscription_group_identifier", "app_account_token", "previous_original_transaction_id",
        ],
        signedDateColumn: "purchase_signed_date"
    )

    /// The columns of the newest notification.
    static let notification = [
        "last_notification_uuid", "last_notification_type", "last_subtype", "last_signed_date", "environment",
        "bundle_id", "app_apple_id",
    ]

    /// Set once for a subscription and possibly left out of later notifications: a carrier without them keeps the
    /// earlier value (an app account token is given at purchase; the app and its environment do not change).
    static let keptWhenAbsent: Set<String> = [
        "app_account_token", "subscription_group_identifier", "previous_original_transaction_id", "environment",
        "bundle_id", "app_apple_id",
    ]

    /// The columns an upsert writes, part by part, each part's signed date after it: every column but the
    /// generated ones.
    package static let insertColumns: String = {
        var columns = ["original_transaction_id"] + notification
        for part in [status, renewal, purchase] { columns += part.columns + [part.signedDateColumn] }
        return (columns + ["updated_at"]).joined(separator: ", ")
    }()

    // MARK: Merging, in the upsert's ON CONFLICT (`current` is the stored row, EXCLUDED the batch's)

    /// The batch's newest notification is newer than the stored row's.
    static let newerNotification = """
        (EXCLUDED.last_signed_date, EXCLUDED.last_notification_uuid) \
        > (current.last_signed_date, current.last_notification_uuid)
        """

    /// The batch carries `part` from a newer notification than the one the row has it from. On equal signed dates
    /// the newer notification overall wins, as for the row's newest notification.
    static func newer(_ part: Part) -> String {
        let (new, old) = ("EXCLUDED.\(part.signedDateColumn)", "current.\(part.signedDateColumn)")
        // The current purchase moves to a later purchase, or to newer word of the same one.
        let (newKey, oldKey) =
            part.signedDateColumn == purchase.signedDateColumn
            ? (
                "(COALESCE(EXCLUDED.purchase_date, '-infinity'), \(new))",
                "(COALESCE(current.purchase_date, '-infinity'), \(old))"
            )
            : (new, old)
        let tie = "(\(newKey) = \(oldKey) AND \(newerNotification))"
        return "(\(new) IS NOT NULL AND (\(old) IS NULL OR \(newKey) > \(oldKey) OR \(tie)))"
    }

    /// `column = …` for the upsert's SET list: the batch's value when `condition`, else the stored one.
    static func assignment(_ column: String, when condition: String) -> String {
        guard keptWhenAbsent.contains(column) else {
            return "\(column) = CASE WHEN \(condition) THEN EXCLUDED.\(column) ELSE current.\(column) END"
        }
        return """
            \(column) = CASE WHEN \(condition) THEN COALESCE(EXCLUDED.\(column), current.\(column)) \
            ELSE COALESCE(current.\(column), EXCLUDED.\(column)) END
            """
    }

    /// The upsert's SET list and WHERE condition: every part merged; the row changes when any part is newer.
    package static let mergeOnConflict: (set: String, where: String) = {
        var assignments = notification.map { assignment($0, when: newerNotification) }
        for part in [status, renewal, purchase] {
            let condition = newer(part)
            assignments += (part.columns + [part.signedDateColumn]).map { assignment($0, when: condition) }
        }
        assignments.append("updated_at = EXCLUDED.updated_at")
        let anyNewer = ([newerNotification] + [status, renewal, purchase].map(newer)).joined(separator: "\n    OR ")
        return (assignments.joined(separator: ",\n"), anyNewer)
    }()

    // MARK: Access, as generated columns of `subscriptions`

    /// Product types as Apple's transaction `type` names them.
    enum ProductTypeName {
        static let autoRenewable = "'Auto-Renewable Subscription'"
        static let nonConsumable = "'Non-Consumable'"
        static let consumable = "'Consumable'"
        static let nonRenewing = "'Non-Renewing Subscription'"
    }

    /// Until when the customer has access (NULL: no end, or no access; read it with ``entitled``):
    /// - an auto-renewable subscription: active (status 1) until its most recent purchase expires, the later of
    ///   the current purchase's `expiresDate` and the renewal info's `renewalDate`; in the billing grace period
    ///   (4) until `gracePeriodExpiresDate`. Without a status (V1): the grace period's end while in billing retry,
    ///   else the current purchase's expiry, unless it is revoked.
    /// - one-time purchases and non-renewing subscriptions: NULL (a non-consumable has no end; a non-renewing
    ///   subscription's length is the app's to define, from `purchase_date`).
    static let entitledUntil = """
        CASE
            WHEN product_type IN (\(ProductTypeName.consumable), \(ProductTypeName.nonConsumable), \
        \(ProductTypeName.nonRenewing)) THEN NULL
            WHEN status = 1 THEN GREATEST(expires_date, renewal_date)
            WHEN status = 4 THEN grace_period_expires_date
            WHEN status IS NULL AND product_type = \(ProductTypeName.autoRenewable) AND revocation_date IS NULL THEN
                CASE WHEN is_in_billing_retry THEN grace_period_expires_date ELSE expires_date END
        END
        """

    /// Whether the customer has access as of the row's notifications (NULL: Apple's fields do not say):
    /// - a consumable: false (granted once, at purchase; no lasting access);
    /// - a non-consumable: true until refunded or revoked (`revocationDate`), with no end;
    /// - a non-renewing subscription: false once revoked, else NULL (its length is the app's to define);
    /// - an auto-renewable subscription: true when active (1) or in the billing grace period (4) and
    ///   ``entitledUntil`` is known; false when expired (2), in billing retry without grace (3) or revoked (5);
    ///   without a status (V1), true while ``entitledUntil`` is known, false once revoked or in billing retry
    ///   without a grace period.
    ///
    /// Access now: `entitled AND (entitled_until IS NULL OR entitled_until > now())` (the view
    /// `subscription_access` computes it).
    static let entitled = """
        CASE
            WHEN product_type = \(ProductTypeName.consumable) THEN false
            WHEN product_type = \(ProductTypeName.nonConsumable) THEN revocation_date IS NULL
            WHEN product_type = \(ProductTypeName.nonRenewing) THEN CASE WHEN revocation_date IS NOT NULL THEN false END
            WHEN status IN (2, 3, 5) THEN false
            WHEN (\(entitledUntil)) IS NOT NULL THEN true
            WHEN status IS NULL AND product_type = \(ProductTypeName.autoRenewable) THEN false
        END
        """

    /// Access now, as a SQL condition over a row of `subscriptions` (false where ``entitled`` is NULL).
    static let accessNow = access(at: "now()")

    /// Access at the instant `instant` (SQL: `now()`, a parameter), as a SQL condition over a row of
    /// `subscriptions`, its columns qualified by `row` when given: the view `subscription_access` and the read API
    /// judge by this one rule.
    package static func access(at instant: String, row: String? = nil) -> String {
        let column = { (name: String) in row.map { "\($0).\(name)" } ?? name }
        return "COALESCE(\(column("entitled")) AND (\(column("entitled_until")) IS NULL OR \(column("entitled_until")) "
            + "> \(instant)), false)"
    }
}
