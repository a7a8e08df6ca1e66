/// The outcome of a subscription-renewal-date extension request for many customers (Apple's `summary` object).
public struct NotificationSummary: Sendable, Hashable, Codable {
    /// The server environment the request ran in.
    public var environment: AppStoreEnvironment?
    /// The unique identifier of the app in the App Store.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The product identifier of the extended subscriptions.
    public var productId: String?
    /// The identifier you gave the extension request.
    public var requestIdentifier: String?
    /// The storefront country codes the request covered.
    public var storefrontCountryCodes: [String]?
    /// How many subscriptions the App Store extended.
    public var succeededCount: Int64?
    /// How many subscriptions the App Store failed to extend.
    public var failedCount: Int64?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        environment: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        requestIdentifier: String? = nil,
        storefrontCountryCodes: [String]? = nil,
        succeededCount: Int64? = nil,
        failedCount: Int64? = nil
    ) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.productId = productId
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}
