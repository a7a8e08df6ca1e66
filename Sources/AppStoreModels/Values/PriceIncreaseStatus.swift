/// Whether the customer consented to a subscription price increase (`priceIncreaseStatus`).
///
/// Unknown future values decode without error and keep their raw value.
public struct PriceIncreaseStatus: AppStoreIntValue {
    /// The value exactly as Apple sends it.
    public let rawValue: Int

    /// Wraps a raw value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `0`
    public static let customerHasNotResponded: Self = 0

    /// `1`
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent: Self = 1
}
