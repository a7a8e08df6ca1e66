/// App metadata and the signed app transaction, in notifications about the app itself (Apple's `appData` object).
public struct AppData: Sendable, Hashable, Codable {
    /// The unique identifier of the app in the App Store.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The server environment the notification applies to.
    public var environment: AppStoreEnvironment?
    /// The app transaction (JWS), decoding to ``AppTransaction``.
    public var signedAppTransactionInfo: String?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        environment: AppStoreEnvironment? = nil,
        signedAppTransactionInfo: String? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
