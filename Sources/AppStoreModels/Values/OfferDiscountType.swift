/// The payment mode of a subscription offer (`offerDiscountType`).
///
/// Unknown future values decode without error and keep their raw value.
public struct OfferDiscountType: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `FREE_TRIAL`
    public static let freeTrial: Self = "FREE_TRIAL"

    /// `PAY_AS_YOU_GO`
    public static let payAsYouGo: Self = "PAY_AS_YOU_GO"

    /// `PAY_UP_FRONT`
    public static let payUpFront: Self = "PAY_UP_FRONT"

    /// `ONE_TIME`
    public static let oneTime: Self = "ONE_TIME"
}
