/// Whether an auto-renewable subscription renews at the end of its period (`autoRenewStatus`).
///
/// Unknown future values decode without error and keep their raw value.
public struct AutoRenewStatus: AppStoreIntValue {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `0`
    public static let off: Self = 0

    /// `1`
    public static let on: Self = 1
}
