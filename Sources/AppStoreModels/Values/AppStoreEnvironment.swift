/// The server environment a notification or transaction comes from (`environment`).
///
/// Unknown future values decode without error and keep their raw value.
public struct AppStoreEnvironment: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `Sandbox`
    public static let sandbox: Self = "Sandbox"

    /// `Production`
    public static let production: Self = "Production"

    /// `Xcode`
    public static let xcode: Self = "Xcode"

    /// `LocalTesting`
    public static let localTesting: Self = "LocalTesting"
}
