/// A legacy App Store Server Notification V1 (`statusUpdateNotification`), posted as plain JSON.
///
/// Apple sends V1 values as strings (dates in three forms: `_ms` milliseconds, GMT and Pacific text).
public struct StatusUpdateNotification: Sendable, Hashable, Codable {
    /// `Sandbox` or `PROD` (`environment`)
    public var environment: String?
    /// The subscription event, for example `INITIAL_BUY` or `DID_RENEW` (`notification_type`)
    public var notificationType: String?
    /// The shared secret you configured in App Store Connect (`password`); the verifier removes it from the
    /// notifications it accepts, so it never travels further.
    public var password: String?
    /// The transaction identifier of the original purchase (`original_transaction_id`)
    public var originalTransactionId: String?
    /// When Apple customer support cancelled the subscription, as GMT text (`cancellation_date`)
    public var cancellationDate: String?
    /// When Apple customer support cancelled the subscription, in milliseconds since 1970 (`cancellation_date_ms`)
    public var cancellationDateMs: String?
    /// When Apple customer support cancelled the subscription, as Pacific time text (`cancellation_date_pst`)
    public var cancellationDatePst: String?
    /// The identifier of the subscription purchase event (`web_order_line_item_id`)
    public var webOrderLineItemId: String?
    /// The latest base64 encoded receipt (deprecated) (`latest_receipt`)
    public var latestReceipt: String?
    /// The latest transaction (deprecated; use `unified_receipt`) (`latest_receipt_info`)
    public var latestReceiptInfo: V1ReceiptInfo?
    /// The latest base64 encoded receipt of an expired subscription (deprecated) (`latest_expired_receipt`)
    public var latestExpiredReceipt: String?
    /// The latest expired transaction (deprecated) (`latest_expired_receipt_info`)
    public var latestExpiredReceiptInfo: V1ReceiptInfo?
    /// `true` or `false`: whether the subscription renews automatically (`auto_renew_status`)
    public var autoRenewStatus: String?
    /// The Apple identifier of the product the subscription renews to (`auto_renew_adam_id`)
    public var autoRenewAdamId: String?
    /// The product identifier the subscription renews to (`auto_renew_product_id`)
    public var autoRenewProductId: String?
    /// Why the subscription expired (`expiration_intent`): a number in Apple's reference, a string in its samples
    public var expirationIntent: V1Number?
    /// When the auto-renew status last changed, in milliseconds since 1970 (`auto_renew_status_change_date_ms`)
    public var autoRenewStatusChangeDateMs: String?
    /// The bundle identifier of the app (`bid`)
    public var bid: String?
    /// The bundle version of the app (`bvrs`)
    public var bvrs: String?
    /// The app's receipt data (`unified_receipt`)
    public var unifiedReceipt: V1UnifiedReceipt?

    /// Creates a value; fields left out are absent, as when Apple omits them. This package's signer builds
    /// notifications with it; users receive values from the verifier or decode Apple's JSON.
    package init(
        environment: String? = nil,
        notificationType: String? = nil,
        password: String? = nil,
        originalTransactionId: String? = nil,
        cancellationDate: String? = nil,
        cancellationDateMs: String? = nil,
        cancellationDatePst: String? = nil,
        webOrderLineItemId: String? = nil,
        latestReceipt: String? = nil,
        latestReceiptInfo: V1ReceiptInfo? = nil,
        latestExpiredReceipt: String? = nil,
        latestExpiredReceiptInfo: V1ReceiptInfo? = nil,
        autoRenewStatus: String? = nil,
        autoRenewAdamId: String? = nil,
        autoRenewProductId: String? = nil,
        expirationIntent: V1Number? = nil,
        autoRenewStatusChangeDateMs: String? = nil,
        bid: String? = nil,
        bvrs: String? = nil,
        unifiedReceipt: V1UnifiedReceipt? = nil
    ) {
        self.environment = environment
        self.notificationType = notificationType
        self.password = password
        self.originalTransactionId = originalTransactionId
        self.cancellationDate = cancellationDate
        self.cancellationDateMs = cancellationDateMs
        self.cancellationDatePst = cancellationDatePst
        self.webOrderLineItemId = webOrderLineItemId
        self.latestReceipt = latestReceipt
        self.latestReceiptInfo = latestReceiptInfo
        self.latestExpiredReceipt = latestExpiredReceipt
        self.latestExpiredReceiptInfo = latestExpiredReceiptInfo
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewAdamId = autoRenewAdamId
        self.autoRenewProductId = autoRenewProductId
        self.expirationIntent = expirationIntent
        self.autoRenewStatusChangeDateMs = autoRenewStatusChangeDateMs
        self.bid = bid
        self.bvrs = bvrs
        self.unifiedReceipt = unifiedReceipt
    }

    enum CodingKeys: String, CodingKey {
        case environment
        case notificationType = "notification_type"
        case password
        case originalTransactionId = "original_transaction_id"
        case cancellationDate = "cancellation_date"
        case cancellationDateMs = "cancellation_date_ms"
        case cancellationDatePst = "cancellation_date_pst"
        case webOrderLineItemId = "web_order_line_item_id"
        case latestReceipt = "latest_receipt"
        case latestReceiptInfo = "latest_receipt_info"
        case latestExpiredReceipt = "latest_expired_receipt"
        case latestExpiredReceiptInfo = "latest_expired_receipt_info"
        case autoRenewStatus = "auto_renew_status"
        case autoRenewAdamId = "auto_renew_adam_id"
        case autoRenewProductId = "auto_renew_product_id"
        case expirationIntent = "expiration_intent"
        case autoRenewStatusChangeDateMs = "auto_renew_status_change_date_ms"
        case bid
        case bvrs
        case unifiedReceipt = "unified_receipt"
    }
}
