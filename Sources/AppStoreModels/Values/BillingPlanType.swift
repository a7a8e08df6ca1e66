/// How a subscription with a commitment is billed (`billingPlanType`, `renewalBillingPlanType`).
///
/// Unknown future values decode without error and keep their raw value.
public struct BillingPlanType: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `BILLED_UPFRONT`
    public static let billedUpfront: Self = "BILLED_UPFRONT"

    /// `MONTHLY`
    public static let monthly: Self = "MONTHLY"
}
