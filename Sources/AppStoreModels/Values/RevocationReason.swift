/// Why the App Store refunded or revoked a transaction (`revocationReason`).
///
/// Unknown future values decode without error and keep their raw value.
public struct RevocationReason: AppStoreIntValue {
    /// The value exactly as Apple sends it.
    public let rawValue: Int

    /// Wraps a raw value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `0`
    public static let other: Self = 0

    /// `1`
    public static let appIssue: Self = 1
}
