/// Why a subscription expired (`expirationIntent`).
///
/// Unknown future values decode without error and keep their raw value.
public struct ExpirationIntent: AppStoreIntValue {
    /// The value exactly as Apple sends it.
    public let rawValue: Int

    /// Wraps a raw value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `1`
    public static let customerCancelled: Self = 1

    /// `2`
    public static let billingError: Self = 2

    /// `3`
    public static let customerDidNotConsentToPriceIncrease: Self = 3

    /// `4`
    public static let productNotAvailable: Self = 4

    /// `5`
    public static let other: Self = 5
}
