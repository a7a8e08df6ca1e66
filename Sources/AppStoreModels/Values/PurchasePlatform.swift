/// The platform on which the customer originally purchased the app (`originalPlatform`).
///
/// Unknown future values decode without error and keep their raw value.
public struct PurchasePlatform: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `iOS`
    public static let iOS: Self = "iOS"

    /// `macOS`
    public static let macOS: Self = "macOS"

    /// `tvOS`
    public static let tvOS: Self = "tvOS"

    /// `visionOS`
    public static let visionOS: Self = "visionOS"
}
