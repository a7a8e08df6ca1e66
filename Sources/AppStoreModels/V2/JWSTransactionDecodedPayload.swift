/// A decoded signed transaction (`signedTransactionInfo`): one purchase, renewal, refund or revocation.
///
/// Dates are milliseconds since 1970, as Apple sends them. Prices are in milliunits of ``currency``.
public struct JWSTransactionDecodedPayload: Sendable, Hashable, Codable {
    /// The transaction identifier of the original purchase; stable across renewals, restores and upgrades.
    public var originalTransactionId: String?
    /// The unique identifier of this transaction.
    public var transactionId: String?
    /// The identifier of subscription purchase events across devices, including renewals.
    public var webOrderLineItemId: String?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The product identifier of the in-app purchase.
    public var productId: String?
    /// The identifier of the subscription group the subscription belongs to.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer (or restored/renewed), in milliseconds since 1970.
    public var purchaseDate: Int64?
    /// The purchase date of the original transaction, in milliseconds since 1970.
    public var originalPurchaseDate: Int64?
    /// When the subscription expires or renews, in milliseconds since 1970.
    public var expiresDate: Int64?
    /// The number of consumable products purchased.
    public var quantity: Int64?
    /// The type of the in-app purchase.
    public var type: ProductType?
    /// The UUID the app optionally set to link the customer's account.
    public var appAccountToken: String?
    /// Whether the customer bought it or has it through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType?
    /// When the App Store signed the transaction, in milliseconds since 1970.
    public var signedDate: Int64?
    /// Why the App Store refunded or revoked the transaction.
    public var revocationReason: RevocationReason?
    /// When the App Store refunded or revoked the transaction, in milliseconds since 1970.
    public var revocationDate: Int64?
    /// Whether the customer upgraded to another subscription.
    public var isUpgraded: Bool?
    /// The type of the subscription offer.
    public var offerType: OfferType?
    /// The identifier of the offer code or promotional offer.
    public var offerIdentifier: String?
    /// The server environment.
    public var environment: AppStoreEnvironment?
    /// The three-letter code of the App Store storefront.
    public var storefront: String?
    /// The App Store identifier of the storefront.
    public var storefrontId: String?
    /// Whether the transaction is a purchase or an auto-renewal.
    public var transactionReason: TransactionReason?
    /// The three-letter ISO 4217 currency code of the price.
    public var currency: String?
    /// The price in milliunits of ``currency``.
    public var price: Int64?
    /// The payment mode of the offer.
    public var offerDiscountType: OfferDiscountType?
    /// The identifier of the app transaction this transaction belongs to.
    public var appTransactionId: String?
    /// The duration of the offer (ISO 8601), for example `P1M`.
    public var offerPeriod: String?
    /// How a refund or revocation was applied.
    public var revocationType: RevocationType?
    /// The refunded share of the price, in thousandths of a percent, for prorated refunds.
    public var revocationPercentage: Int64?
    /// How a subscription with a commitment is billed.
    public var billingPlanType: BillingPlanType?
    /// The commitment this transaction belongs to, for subscriptions billed monthly over a committed term.
    public var commitmentInfo: TransactionCommitmentInfo?
    /// Advanced Commerce API details, kept verbatim (a deep tree Apple extends often).
    public var advancedCommerceInfo: JSONValue?
    /// The original transaction id of the subscription this one replaced when the customer switched between a
    /// standalone subscription and a subscription bundle, either way (App Store Server Notifications 2.16).
    public var previousOriginalTransactionId: String?

    /// Creates a value; fields left out are absent, as when Apple omits them. This package's signer builds
    /// notifications with it; users receive values from the verifier or decode Apple's JSON.
    package init(
        originalTransactionId: String? = nil,
        transactionId: String? = nil,
        webOrderLineItemId: String? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Int64? = nil,
        originalPurchaseDate: Int64? = nil,
        expiresDate: Int64? = nil,
        quantity: Int64? = nil,
        type: ProductType? = nil,
        appAccountToken: String? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil,
        signedDate: Int64? = nil,
        revocationReason: RevocationReason? = nil,
        revocationDate: Int64? = nil,
        isUpgraded: Bool? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        environment: AppStoreEnvironment? = nil,
        storefront: String? = nil,
        storefrontId: String? = nil,
        transactionReason: TransactionReason? = nil,
        currency: String? = nil,
        price: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        revocationType: RevocationType? = nil,
        revocationPercentage: Int64? = nil,
        billingPlanType: BillingPlanType? = nil,
        commitmentInfo: TransactionCommitmentInfo? = nil,
        advancedCommerceInfo: JSONValue? = nil,
        previousOriginalTransactionId: String? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.offerDiscountType = offerDiscountType
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.billingPlanType = billingPlanType
        self.commitmentInfo = commitmentInfo
        self.advancedCommerceInfo = advancedCommerceInfo
        self.previousOriginalTransactionId = previousOriginalTransactionId
    }
}
