/// How a refund or revocation was applied (`revocationType`).
///
/// Unknown future values decode without error and keep their raw value.
public struct RevocationType: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `REFUND_FULL`
    public static let refundFull: Self = "REFUND_FULL"

    /// `REFUND_PRORATED`
    public static let refundProrated: Self = "REFUND_PRORATED"

    /// `FAMILY_REVOKE`
    public static let familyRevoke: Self = "FAMILY_REVOKE"
}
