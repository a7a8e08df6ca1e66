/// Why a transaction happened: a purchase or an auto-renewal (`transactionReason`).
///
/// Unknown future values decode without error and keep their raw value.
public struct TransactionReason: AppStoreStringValue {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `PURCHASE`
    public static let purchase: Self = "PURCHASE"

    /// `RENEWAL`
    public static let renewal: Self = "RENEWAL"
}
