/// The type of a subscription offer (`offerType`).
///
/// Unknown future values decode without error and keep their raw value.
public struct OfferType: AppStoreIntValue {
    /// The value exactly as Apple sends it.
    public let rawValue: Int

    /// Wraps a raw value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `1`
    public static let introductoryOffer: Self = 1

    /// `2`
    public static let promotionalOffer: Self = 2

    /// `3`
    public static let offerCode: Self = 3

    /// `4`
    public static let winBackOffer: Self = 4
}
