#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row of `subscriptions`: a subscription's state as its notifications left it, merged by
/// ``SubscriptionStateRules`` (the newest notification's type and date, the newest status and renewal info, the
/// latest purchase), with the access they give.
package struct SubscriptionState: Sendable, Hashable, Codable {
    package var originalTransactionId: String
    package var lastNotificationUUID: UUID
    package var lastNotificationType: String
    package var lastSubtype: String?
    package var lastSignedDate: Date
    package var transactionId: String?
    package var productId: String?
    package var expiresDate: Date?
    /// 0 off, 1 on (Apple's `autoRenewStatus`).
    package var autoRenewStatus: Int?
    package var revocationDate: Date?
    package var environment: String?
    package var bundleId: String?
    package var appAppleId: Int64?
    /// Apple's `status` of the subscription: 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    package var status: Int?
    /// The renewal info's `gracePeriodExpiresDate`.
    package var gracePeriodExpiresDate: Date?
    /// The renewal info's `autoRenewProductId`: the product the subscription renews to.
    package var autoRenewProductId: String?
    /// The transaction's `price`, in milliunits of ``currency``.
    package var price: Int64?
    package var currency: String?
    /// The transaction's `offerType`.
    package var offerType: Int?
    /// Whether the customer has access (``SubscriptionStateRules/entitled``); nil when Apple's fields do not say.
    package var entitled: Bool?
    /// Until when (``SubscriptionStateRules/entitledUntil``); nil with ``entitled`` true: no end.
    package var entitledUntil: Date?
    /// When this row last changed.
    package var updatedAt: Date
    /// The current purchase's `type`: `Auto-Renewable Subscription`, `Non-Consumable`, `Consumable`,
    /// `Non-Renewing Subscription`.
    package var productType: String?
    package var purchaseDate: Date?
    package var revocationReason: Int?
    /// `PURCHASED` or `FAMILY_SHARED`.
    package var inAppOwnershipType: String?
    package var subscriptionGroupIdentifier: String?
    /// The app's own customer id given at purchase (the transaction's, else the renewal info's).
    package var appAccountToken: String?
    package var previousOriginalTransactionId: String?
    /// The renewal info's `renewalDate`: when the most recent purchase expires.
    package var renewalDate: Date?
    package var isInBillingRetry: Bool?
    package var expirationIntent: Int?

    /// Creates a state.
    package init(
        originalTransactionId: String,
        lastNotificationUUID: UUID,
        lastNotificationType: String,
        lastSubtype: String? = nil,
        lastSignedDate: Date,
        transactionId: String? = nil,
        productId: String? = nil,
        expiresDate: Date? = nil,
        autoRenewStatus: Int? = nil,
        revocationDate: Date? = nil,
        environment: String? = nil,
        bundleId: String? = nil,
        appAppleId: Int64? = nil,
        status: Int? = nil,
        gracePeriodExpiresDate: Date? = nil,
        autoRenewProductId: String? = nil,
        price: Int64? = nil,
        currency: String? = nil,
        offerType: Int? = nil,
        entitled: Bool? = nil,
        entitledUntil: Date? = nil,
        updatedAt: Date,
        productType: String? = nil,
        purchaseDate: Date? = nil,
        revocationReason: Int? = nil,
        inAppOwnershipType: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        appAccountToken: String? = nil,
        previousOriginalTransactionId: String? = nil,
        renewalDate: Date? = nil,
        isInBillingRetry: Bool? = nil,
        expirationIntent: Int? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.lastNotificationUUID = lastNotificationUUID
        self.lastNotificationType = lastNotificationType
        self.lastSubtype = lastSubtype
        self.lastSignedDate = lastSignedDate
        self.transactionId = transactionId
        self.productId = productId
        self.expiresDate = expiresDate
        self.autoRenewStatus = autoRenewStatus
        self.revocationDate = revocationDate
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.status = status
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.autoRenewProductId = autoRenewProductId
        self.price = price
        self.currency = currency
        self.offerType = offerType
        self.entitled = entitled
        self.entitledUntil = entitledUntil
        self.updatedAt = updatedAt
        self.productType = productType
        self.purchaseDate = purchaseDate
        self.revocationReason = revocationReason
        self.inAppOwnershipType = inAppOwnershipType
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.appAccountToken = appAccountToken
        self.previousOriginalTransactionId = previousOriginalTransactionId
        self.renewalDate = renewalDate
        self.isInBillingRetry = isInBillingRetry
        self.expirationIntent = expirationIntent
    }
}
