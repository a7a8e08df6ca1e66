/// The type of an in-app purchase product (`type`).
///
/// Unknown future values decode without error and keep their raw value.
public struct ProductType: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `Auto-Renewable Subscription`
    public static let autoRenewableSubscription: Self = "Auto-Renewable Subscription"

    /// `Non-Consumable`
    public static let nonConsumable: Self = "Non-Consumable"

    /// `Consumable`
    public static let consumable: Self = "Consumable"

    /// `Non-Renewing Subscription`
    public static let nonRenewingSubscription: Self = "Non-Renewing Subscription"
}
