/// The receipt data in a V1 notification (`unified_receipt`).
///
/// Apple sends V1 values as strings (dates in three forms: `_ms` milliseconds, GMT and Pacific text).
public struct V1UnifiedReceipt: Sendable, Hashable, Codable {
    /// `Sandbox` or `Production` (`environment`)
    public var environment: String?
    /// The latest base64 encoded app receipt (`latest_receipt`)
    public var latestReceipt: String?
    /// The most recent in-app purchase transactions (`latest_receipt_info`)
    public var latestReceiptInfo: [V1ReceiptInfo]?
    /// The pending renewals of the app's subscriptions (`pending_renewal_info`)
    public var pendingRenewalInfo: [V1PendingRenewalInfo]?
    /// The receipt status code; 0 when valid (`status`)
    public var status: Int?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        environment: String? = nil,
        latestReceipt: String? = nil,
        latestReceiptInfo: [V1ReceiptInfo]? = nil,
        pendingRenewalInfo: [V1PendingRenewalInfo]? = nil,
        status: Int? = nil
    ) {
        self.environment = environment
        self.latestReceipt = latestReceipt
        self.latestReceiptInfo = latestReceiptInfo
        self.pendingRenewalInfo = pendingRenewalInfo
        self.status = status
    }

    enum CodingKeys: String, CodingKey {
        case environment
        case latestReceipt = "latest_receipt"
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
        case status
    }
}
