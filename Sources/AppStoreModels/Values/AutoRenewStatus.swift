/// Whether an auto-renewable subscription renews at the end of its period (`autoRenewStatus`).
///
/// Unknown future values decode without error and keep their raw value.
public struct AutoRenewStatus: AppStoreIntValue {
    /// The value exactly as Apple sends it.
    public let rawValue: Int

    /// Wraps a raw value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `0`
    public static let off: Self = 0

    /// `1`
    public static let on: Self = 1
}
