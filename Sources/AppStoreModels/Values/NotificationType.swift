/// The type of an App Store Server Notification V2 (`notificationType`).
///
/// Unknown future values decode without error and keep their raw value.
public struct NotificationType: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `SUBSCRIBED`
    public static let subscribed: Self = "SUBSCRIBED"

    /// `DID_CHANGE_RENEWAL_PREF`
    public static let didChangeRenewalPref: Self = "DID_CHANGE_RENEWAL_PREF"

    /// `DID_CHANGE_RENEWAL_STATUS`
    public static let didChangeRenewalStatus: Self = "DID_CHANGE_RENEWAL_STATUS"

    /// `OFFER_REDEEMED`
    public static let offerRedeemed: Self = "OFFER_REDEEMED"

    /// `DID_RENEW`
    public static let didRenew: Self = "DID_RENEW"

    /// `EXPIRED`
    public static let expired: Self = "EXPIRED"

    /// `DID_FAIL_TO_RENEW`
    public static let didFailToRenew: Self = "DID_FAIL_TO_RENEW"

    /// `GRACE_PERIOD_EXPIRED`
    public static let gracePeriodExpired: Self = "GRACE_PERIOD_EXPIRED"

    /// `PRICE_INCREASE`
    public static let priceIncrease: Self = "PRICE_INCREASE"

    /// `REFUND`
    public static let refund: Self = "REFUND"

    /// `REFUND_DECLINED`
    public static let refundDeclined: Self = "REFUND_DECLINED"

    /// `CONSUMPTION_REQUEST`
    public static let consumptionRequest: Self = "CONSUMPTION_REQUEST"

    /// `RENEWAL_EXTENDED`
    public static let renewalExtended: Self = "RENEWAL_EXTENDED"

    /// `REVOKE`
    public static let revoke: Self = "REVOKE"

    /// `TEST`
    public static let test: Self = "TEST"

    /// `RENEWAL_EXTENSION`
    public static let renewalExtension: Self = "RENEWAL_EXTENSION"

    /// `REFUND_REVERSED`
    public static let refundReversed: Self = "REFUND_REVERSED"

    /// `EXTERNAL_PURCHASE_TOKEN`
    public static let externalPurchaseToken: Self = "EXTERNAL_PURCHASE_TOKEN"

    /// `ONE_TIME_CHARGE`
    public static let oneTimeCharge: Self = "ONE_TIME_CHARGE"

    /// `RESCIND_CONSENT`
    public static let rescindConsent: Self = "RESCIND_CONSENT"

    /// `METADATA_UPDATE`
    public static let metadataUpdate: Self = "METADATA_UPDATE"

    /// `MIGRATION`
    public static let migration: Self = "MIGRATION"

    /// `PRICE_CHANGE`
    public static let priceChange: Self = "PRICE_CHANGE"
}
