/// Whether the customer purchased the product or has it through Family Sharing (`inAppOwnershipType`).
///
/// Unknown future values decode without error and keep their raw value.
public struct InAppOwnershipType: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `FAMILY_SHARED`
    public static let familyShared: Self = "FAMILY_SHARED"

    /// `PURCHASED`
    public static let purchased: Self = "PURCHASED"
}
