/// The subtype that details a V2 notification (`subtype`).
///
/// Unknown future values decode without error and keep their raw value.
public struct NotificationSubtype: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `INITIAL_BUY`
    public static let initialBuy: Self = "INITIAL_BUY"

    /// `RESUBSCRIBE`
    public static let resubscribe: Self = "RESUBSCRIBE"

    /// `DOWNGRADE`
    public static let downgrade: Self = "DOWNGRADE"

    /// `UPGRADE`
    public static let upgrade: Self = "UPGRADE"

    /// `AUTO_RENEW_ENABLED`
    public static let autoRenewEnabled: Self = "AUTO_RENEW_ENABLED"

    /// `AUTO_RENEW_DISABLED`
    public static let autoRenewDisabled: Self = "AUTO_RENEW_DISABLED"

    /// `VOLUNTARY`
    public static let voluntary: Self = "VOLUNTARY"

    /// `BILLING_RETRY`
    public static let billingRetry: Self = "BILLING_RETRY"

    /// `PRICE_INCREASE`
    public static let priceIncrease: Self = "PRICE_INCREASE"

    /// `GRACE_PERIOD`
    public static let gracePeriod: Self = "GRACE_PERIOD"

    /// `PENDING`
    public static let pending: Self = "PENDING"

    /// `ACCEPTED`
    public static let accepted: Self = "ACCEPTED"

    /// `BILLING_RECOVERY`
    public static let billingRecovery: Self = "BILLING_RECOVERY"

    /// `PRODUCT_NOT_FOR_SALE`
    public static let productNotForSale: Self = "PRODUCT_NOT_FOR_SALE"

    /// `SUMMARY`
    public static let summary: Self = "SUMMARY"

    /// `FAILURE`
    public static let failure: Self = "FAILURE"

    /// `UNREPORTED`
    public static let unreported: Self = "UNREPORTED"
}
