/// Why the customer requested a refund, in a CONSUMPTION_REQUEST (`consumptionRequestReason`).
///
/// Unknown future values decode without error and keep their raw value.
public struct ConsumptionRequestReason: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `UNINTENDED_PURCHASE`
    public static let unintendedPurchase: Self = "UNINTENDED_PURCHASE"

    /// `FULFILLMENT_ISSUE`
    public static let fulfillmentIssue: Self = "FULFILLMENT_ISSUE"

    /// `UNSATISFIED_WITH_PURCHASE`
    public static let unsatisfiedWithPurchase: Self = "UNSATISFIED_WITH_PURCHASE"

    /// `LEGAL`
    public static let legal: Self = "LEGAL"

    /// `OTHER`
    public static let other: Self = "OTHER"
}
