import AppStoreModels

/// One event in a subscription's life, with everything needed to sign a realistic V2 notification for it: the
/// outer payload plus a signed transaction and signed renewal info (three JWS, as Apple sends).
package struct SubscriptionEvent: Sendable, Hashable {
    /// The notification type.
    package var notificationType: NotificationType
    /// The subtype, if any.
    package var subtype: NotificationSubtype?
    /// The notification UUID (the deduplication key).
    package var notificationUUID: String
    /// Milliseconds since 1970.
    package var signedDate: Int64
    /// The app's bundle id, in the payload and the transaction.
    package var bundleId: String
    /// The app Apple id (absent in the sandbox).
    package var appAppleId: Int64?
    /// The environment in the payload, transaction and renewal info.
    package var environment: AppStoreEnvironment
    /// The subscription's original transaction id.
    package var originalTransactionId: String
    /// This event's transaction id.
    package var transactionId: String
    /// The subscribed product.
    package var productId: String
    /// Milliseconds since 1970.
    package var purchaseDate: Int64
    /// Milliseconds since 1970.
    package var expiresDate: Int64
    /// Whether the subscription renews.
    package var autoRenewStatus: AutoRenewStatus
    /// Milliseconds since 1970; set for REFUND and REVOKE.
    package var revocationDate: Int64?

    // Set after creating an event, for the sequences of Docs/entitlement.md; the defaults sign what Apple sends for
    // a plain subscription purchase.
    /// `data.status`; nil: active, or revoked when ``revocationDate`` is set (absent for one-time purchases).
    package var status: SubscriptionStatus?
    /// The transaction's `type`; a one-time purchase carries no expiry, renewal info nor status.
    package var productType: ProductType = .autoRenewableSubscription
    package var appAccountToken: String?
    package var inAppOwnershipType: InAppOwnershipType = .purchased
    /// The renewal info's `renewalDate`; nil: ``expiresDate``.
    package var renewalDate: Int64?
    package var gracePeriodExpiresDate: Int64?
    package var isInBillingRetryPeriod: Bool?
    /// The renewal info's `autoRenewProductId`; nil: ``productId``.
    package var autoRenewProductId: String?
    /// The transaction's price, in milliunits.
    package var price: Int64 = 9990

    /// Whether the product is an auto-renewable subscription (Apple sends renewal info and a status for those only).
    package var isAutoRenewable: Bool { productType == .autoRenewableSubscription }

    /// Creates an event; purchase date defaults to the signed date, expiry to 30 days after it.
    package init(
        notificationType: NotificationType,
        subtype: NotificationSubtype? = nil,
        notificationUUID: String,
        signedDate: Int64,
        bundleId: String,
        appAppleId: Int64? = nil,
        environment: AppStoreEnvironment = .sandbox,
        originalTransactionId: String,
        transactionId: String,
        productId: String,
        purchaseDate: Int64? = nil,
        expiresDate: Int64? = nil,
        autoRenewStatus: AutoRenewStatus = .on,
        revocationDate: Int64? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.productId = productId
        self.purchaseDate = purchaseDate ?? signedDate
        self.expiresDate = expiresDate ?? (signedDate + 30 * 24 * 3600 * 1000)
        self.autoRenewStatus = autoRenewStatus
        self.revocationDate = revocationDate
    }

    /// The decoded transaction this event's notification carries.
    package var transaction: JWSTransactionDecodedPayload {
        JWSTransactionDecodedPayload(
            originalTransactionId: originalTransactionId,
            transactionId: transactionId,
            webOrderLineItemId: String(transactionId.reversed()),
            bundleId: bundleId,
            productId: productId,
            subscriptionGroupIdentifier: isAutoRenewable ? "21000001" : nil,
            purchaseDate: purchaseDate,
            originalPurchaseDate: purchaseDate,
            expiresDate: isAutoRenewable ? expiresDate : nil,
            quantity: 1,
            type: productType,
            appAccountToken: appAccountToken,
            inAppOwnershipType: inAppOwnershipType,
            signedDate: signedDate,
            revocationReason: revocationDate == nil ? nil : .other,
            revocationDate: revocationDate,
            environment: environment,
            storefront: "USA",
            storefrontId: "143441",
            transactionReason: notificationType == .didRenew ? .renewal : .purchase,
            currency: "USD",
            price: price
        )
    }

    /// The decoded renewal info this event's notification carries.
    package var renewalInfo: JWSRenewalInfoDecodedPayload {
        JWSRenewalInfoDecodedPayload(
            originalTransactionId: originalTransactionId,
            autoRenewProductId: autoRenewProductId ?? productId,
            productId: productId,
            autoRenewStatus: autoRenewStatus,
            isInBillingRetryPeriod: isInBillingRetryPeriod,
            gracePeriodExpiresDate: gracePeriodExpiresDate,
            signedDate: signedDate,
            environment: environment,
            recentSubscriptionStartDate: purchaseDate,
            renewalDate: renewalDate ?? expiresDate,
            currency: "USD",
            renewalPrice: 9990
        )
    }
}
