/// One subscription's pending renewal in a V1 notification (an element of `pending_renewal_info`).
///
/// Apple sends V1 values as strings (dates in three forms: `_ms` milliseconds, GMT and Pacific text).
public struct V1PendingRenewalInfo: Sendable, Hashable, Codable {
    /// The product the subscription renews to (`auto_renew_product_id`)
    public var autoRenewProductId: String?
    /// "1" when the subscription renews automatically, "0" when not (`auto_renew_status`)
    public var autoRenewStatus: String?
    /// Why the subscription expired (`expiration_intent`)
    public var expirationIntent: V1Number?
    /// When the billing grace period ends, as GMT text (`grace_period_expires_date`)
    public var gracePeriodExpiresDate: String?
    /// When the billing grace period ends, in milliseconds since 1970 (`grace_period_expires_date_ms`)
    public var gracePeriodExpiresDateMs: String?
    /// When the billing grace period ends, as Pacific time text (`grace_period_expires_date_pst`)
    public var gracePeriodExpiresDatePst: String?
    /// "1" while Apple is trying to renew an expired subscription (`is_in_billing_retry_period`)
    public var isInBillingRetryPeriod: String?
    /// The reference name of the offer code (`offer_code_ref_name`)
    public var offerCodeRefName: String?
    /// The transaction identifier of the original purchase (`original_transaction_id`)
    public var originalTransactionId: String?
    /// Whether the customer consented to a price increase (`price_consent_status`)
    public var priceConsentStatus: String?
    /// The product identifier (`product_id`)
    public var productId: String?
    /// The identifier of the promotional offer (`promotional_offer_id`)
    public var promotionalOfferId: String?
    /// Whether the customer was notified of a price increase (`price_increase_status`)
    public var priceIncreaseStatus: String?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        autoRenewProductId: String? = nil,
        autoRenewStatus: String? = nil,
        expirationIntent: V1Number? = nil,
        gracePeriodExpiresDate: String? = nil,
        gracePeriodExpiresDateMs: String? = nil,
        gracePeriodExpiresDatePst: String? = nil,
        isInBillingRetryPeriod: String? = nil,
        offerCodeRefName: String? = nil,
        originalTransactionId: String? = nil,
        priceConsentStatus: String? = nil,
        productId: String? = nil,
        promotionalOfferId: String? = nil,
        priceIncreaseStatus: String? = nil
    ) {
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.gracePeriodExpiresDateMs = gracePeriodExpiresDateMs
        self.gracePeriodExpiresDatePst = gracePeriodExpiresDatePst
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.offerCodeRefName = offerCodeRefName
        self.originalTransactionId = originalTransactionId
        self.priceConsentStatus = priceConsentStatus
        self.productId = productId
        self.promotionalOfferId = promotionalOfferId
        self.priceIncreaseStatus = priceIncreaseStatus
    }

    enum CodingKeys: String, CodingKey {
        case autoRenewProductId = "auto_renew_product_id"
        case autoRenewStatus = "auto_renew_status"
        case expirationIntent = "expiration_intent"
        case gracePeriodExpiresDate = "grace_period_expires_date"
        case gracePeriodExpiresDateMs = "grace_period_expires_date_ms"
        case gracePeriodExpiresDatePst = "grace_period_expires_date_pst"
        case isInBillingRetryPeriod = "is_in_billing_retry_period"
        case offerCodeRefName = "offer_code_ref_name"
        case originalTransactionId = "original_transaction_id"
        case priceConsentStatus = "price_consent_status"
        case productId = "product_id"
        case promotionalOfferId = "promotional_offer_id"
        case priceIncreaseStatus = "price_increase_status"
    }
}
