/// One in-app purchase transaction in a V1 notification (an element of `latest_receipt_info`).
///
/// Apple sends V1 values as strings (dates in three forms: `_ms` milliseconds, GMT and Pacific text).
public struct V1ReceiptInfo: Sendable, Hashable, Codable {
    /// The UUID the app set to link the customer's account (`app_account_token`)
    public var appAccountToken: String?
    /// When Apple customer support cancelled the transaction, as GMT text (`cancellation_date`)
    public var cancellationDate: String?
    /// When Apple customer support cancelled the transaction, in milliseconds since 1970 (`cancellation_date_ms`)
    public var cancellationDateMs: String?
    /// When Apple customer support cancelled the transaction, as Pacific time text (`cancellation_date_pst`)
    public var cancellationDatePst: String?
    /// Why the transaction was cancelled: "1" app issue, "0" other (`cancellation_reason`)
    public var cancellationReason: String?
    /// When the subscription expires or renews, as GMT text (`expires_date`)
    public var expiresDate: String?
    /// When the subscription expires or renews, in milliseconds since 1970 (`expires_date_ms`)
    public var expiresDateMs: String?
    /// When the subscription expires or renews, as Pacific time text (`expires_date_pst`)
    public var expiresDatePst: String?
    /// PURCHASED or FAMILY_SHARED (`in_app_ownership_type`)
    public var inAppOwnershipType: String?
    /// "true" while in an introductory price period (`is_in_intro_offer_period`)
    public var isInIntroOfferPeriod: String?
    /// "true" while in a free trial (`is_trial_period`)
    public var isTrialPeriod: String?
    /// "true" when the customer upgraded to another subscription (`is_upgraded`)
    public var isUpgraded: String?
    /// The reference name of the offer code (`offer_code_ref_name`)
    public var offerCodeRefName: String?
    /// When the original purchase happened, as GMT text (`original_purchase_date`)
    public var originalPurchaseDate: String?
    /// When the original purchase happened, in milliseconds since 1970 (`original_purchase_date_ms`)
    public var originalPurchaseDateMs: String?
    /// When the original purchase happened, as Pacific time text (`original_purchase_date_pst`)
    public var originalPurchaseDatePst: String?
    /// The transaction identifier of the original purchase (`original_transaction_id`)
    public var originalTransactionId: String?
    /// The identifier of the promotional offer (`promotional_offer_id`)
    public var promotionalOfferId: String?
    /// The product identifier (`product_id`)
    public var productId: String?
    /// When the App Store charged the customer, as GMT text (`purchase_date`)
    public var purchaseDate: String?
    /// When the App Store charged the customer, in milliseconds since 1970 (`purchase_date_ms`)
    public var purchaseDateMs: String?
    /// When the App Store charged the customer, as Pacific time text (`purchase_date_pst`)
    public var purchaseDatePst: String?
    /// The number of consumable products purchased (`quantity`)
    public var quantity: String?
    /// The subscription group identifier (`subscription_group_identifier`)
    public var subscriptionGroupIdentifier: String?
    /// The unique identifier of the transaction (`transaction_id`)
    public var transactionId: String?
    /// The identifier of subscription purchase events across devices (`web_order_line_item_id`)
    public var webOrderLineItemId: String?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        appAccountToken: String? = nil,
        cancellationDate: String? = nil,
        cancellationDateMs: String? = nil,
        cancellationDatePst: String? = nil,
        cancellationReason: String? = nil,
        expiresDate: String? = nil,
        expiresDateMs: String? = nil,
        expiresDatePst: String? = nil,
        inAppOwnershipType: String? = nil,
        isInIntroOfferPeriod: String? = nil,
        isTrialPeriod: String? = nil,
        isUpgraded: String? = nil,
        offerCodeRefName: String? = nil,
        originalPurchaseDate: String? = nil,
        originalPurchaseDateMs: String? = nil,
        originalPurchaseDatePst: String? = nil,
        originalTransactionId: String? = nil,
        promotionalOfferId: String? = nil,
        productId: String? = nil,
        purchaseDate: String? = nil,
        purchaseDateMs: String? = nil,
        purchaseDatePst: String? = nil,
        quantity: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        transactionId: String? = nil,
        webOrderLineItemId: String? = nil
    ) {
        self.appAccountToken = appAccountToken
        self.cancellationDate = cancellationDate
        self.cancellationDateMs = cancellationDateMs
        self.cancellationDatePst = cancellationDatePst
        self.cancellationReason = cancellationReason
        self.expiresDate = expiresDate
        self.expiresDateMs = expiresDateMs
        self.expiresDatePst = expiresDatePst
        self.inAppOwnershipType = inAppOwnershipType
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.isTrialPeriod = isTrialPeriod
        self.isUpgraded = isUpgraded
        self.offerCodeRefName = offerCodeRefName
        self.originalPurchaseDate = originalPurchaseDate
        self.originalPurchaseDateMs = originalPurchaseDateMs
        self.originalPurchaseDatePst = originalPurchaseDatePst
        self.originalTransactionId = originalTransactionId
        self.promotionalOfferId = promotionalOfferId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.purchaseDateMs = purchaseDateMs
        self.purchaseDatePst = purchaseDatePst
        self.quantity = quantity
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.transactionId = transactionId
        self.webOrderLineItemId = webOrderLineItemId
    }

    enum CodingKeys: String, CodingKey {
        case appAccountToken = "app_account_token"
        case cancellationDate = "cancellation_date"
        case cancellationDateMs = "cancellation_date_ms"
        case cancellationDatePst = "cancellation_date_pst"
        case cancellationReason = "cancellation_reason"
        case expiresDate = "expires_date"
        case expiresDateMs = "expires_date_ms"
        case expiresDatePst = "expires_date_pst"
        case inAppOwnershipType = "in_app_ownership_type"
        case isInIntroOfferPeriod = "is_in_intro_offer_period"
        case isTrialPeriod = "is_trial_period"
        case isUpgraded = "is_upgraded"
        case offerCodeRefName = "offer_code_ref_name"
        case originalPurchaseDate = "original_purchase_date"
        case originalPurchaseDateMs = "original_purchase_date_ms"
        case originalPurchaseDatePst = "original_purchase_date_pst"
        case originalTransactionId = "original_transaction_id"
        case promotionalOfferId = "promotional_offer_id"
        case productId = "product_id"
        case purchaseDate = "purchase_date"
        case purchaseDateMs = "purchase_date_ms"
        case purchaseDatePst = "purchase_date_pst"
        case quantity
        case subscriptionGroupIdentifier = "subscription_group_identifier"
        case transactionId = "transaction_id"
        case webOrderLineItemId = "web_order_line_item_id"
    }
}
