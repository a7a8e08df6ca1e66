/// Decoded subscription renewal information (`signedRenewalInfo`): what happens at the next renewal.
///
/// Dates are milliseconds since 1970, as Apple sends them. Prices are in milliunits of ``currency``.
public struct JWSRenewalInfoDecodedPayload: Sendable, Hashable, Codable {
    /// Why the subscription expired.
    public var expirationIntent: ExpirationIntent?
    /// The transaction identifier of the original purchase.
    public var originalTransactionId: String?
    /// The product identifier the subscription renews to.
    public var autoRenewProductId: String?
    /// The product identifier of the current subscription.
    public var productId: String?
    /// Whether the subscription renews automatically.
    public var autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is still trying to renew an expired subscription.
    public var isInBillingRetryPeriod: Bool?
    /// Whether the customer consented to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends, in milliseconds since 1970.
    public var gracePeriodExpiresDate: Int64?
    /// The type of the offer applied at renewal.
    public var offerType: OfferType?
    /// The identifier of the offer applied at renewal.
    public var offerIdentifier: String?
    /// When the App Store signed the renewal information, in milliseconds since 1970.
    public var signedDate: Int64?
    /// The server environment.
    public var environment: AppStoreEnvironment?
    /// The earliest start date of the subscription in a series of auto-renewals, in milliseconds since 1970.
    public var recentSubscriptionStartDate: Int64?
    /// When the subscription renews next, in milliseconds since 1970.
    public var renewalDate: Int64?
    /// The three-letter ISO 4217 currency code of the renewal price.
    public var currency: String?
    /// The renewal price in milliunits of ``currency``.
    public var renewalPrice: Int64?
    /// The payment mode of the offer applied at renewal.
    public var offerDiscountType: OfferDiscountType?
    /// The win-back offers the customer is eligible for.
    public var eligibleWinBackOfferIds: [String]?
    /// The UUID the app optionally set to link the customer's account.
    public var appAccountToken: String?
    /// The identifier of the app transaction.
    public var appTransactionId: String?
    /// The duration of the offer applied at renewal (ISO 8601).
    public var offerPeriod: String?
    /// How the subscription is billed after renewal.
    public var renewalBillingPlanType: BillingPlanType?
    /// What happens when the subscription's commitment term ends.
    public var commitmentInfo: RenewalCommitmentInfo?
    /// Advanced Commerce API details, kept verbatim (a deep tree Apple extends often).
    public var advancedCommerceInfo: JSONValue?

    /// Creates a value; fields left out are absent, as when Apple omits them. This package's signer builds
    /// notifications with it; users receive values from the verifier or decode Apple's JSON.
    package init(
        expirationIntent: ExpirationIntent? = nil,
        originalTransactionId: String? = nil,
        autoRenewProductId: String? = nil,
        productId: String? = nil,
        autoRenewStatus: AutoRenewStatus? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        priceIncreaseStatus: PriceIncreaseStatus? = nil,
        gracePeriodExpiresDate: Int64? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        signedDate: Int64? = nil,
        environment: AppStoreEnvironment? = nil,
        recentSubscriptionStartDate: Int64? = nil,
        renewalDate: Int64? = nil,
        currency: String? = nil,
        renewalPrice: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        eligibleWinBackOfferIds: [String]? = nil,
        appAccountToken: String? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        renewalBillingPlanType: BillingPlanType? = nil,
        commitmentInfo: RenewalCommitmentInfo? = nil,
        advancedCommerceInfo: JSONValue? = nil
    ) {
        self.expirationIntent = expirationIntent
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.priceIncreaseStatus = priceIncreaseStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.currency = currency
        self.renewalPrice = renewalPrice
        self.offerDiscountType = offerDiscountType
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.renewalBillingPlanType = renewalBillingPlanType
        self.commitmentInfo = commitmentInfo
        self.advancedCommerceInfo = advancedCommerceInfo
    }
}
