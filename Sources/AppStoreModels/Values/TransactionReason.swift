/// Why a transaction happened: a purchase or an auto-renewal (`transactionReason`).
///
/// Unknown future values decode without error and keep their raw value.
public struct TransactionReason: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `PURCHASE`
    public static let purchase: Self = "PURCHASE"

    /// `RENEWAL`
    public static let renewal: Self = "RENEWAL"
}
