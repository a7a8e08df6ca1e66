/// The status of an auto-renewable subscription at the time of the notification (`status`).
///
/// Unknown future values decode without error and keep their raw value.
public struct SubscriptionStatus: AppStoreIntValue {
    /// The value exactly as Apple sends it.
    public let rawValue: Int

    /// Wraps a raw value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `1`
    public static let active: Self = 1

    /// `2`
    public static let expired: Self = 2

    /// `3`
    public static let billingRetry: Self = 3

    /// `4`
    public static let billingGracePeriod: Self = 4

    /// `5`
    public static let revoked: Self = 5
}
