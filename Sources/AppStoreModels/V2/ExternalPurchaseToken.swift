/// An external purchase token, in `EXTERNAL_PURCHASE_TOKEN` notifications (Apple's `externalPurchaseToken` object).
public struct ExternalPurchaseToken: Sendable, Hashable, Codable {
    /// The unique identifier of the token; sandbox tokens start with `SANDBOX`.
    public var externalPurchaseId: String?
    /// When the token was created, in milliseconds since 1970.
    public var tokenCreationDate: Int64?
    /// The unique identifier of the app in the App Store.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        externalPurchaseId: String? = nil,
        tokenCreationDate: Int64? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }

    /// How a sandbox token's identifier starts, as Apple's libraries test it (`SANDBOX`, no separator after it).
    package static let sandboxIdentifierPrefix = "SANDBOX"

    /// The environment Apple's libraries infer for a token: sandbox tokens' identifiers start with
    /// ``sandboxIdentifierPrefix``.
    package var inferredEnvironment: AppStoreEnvironment {
        (externalPurchaseId?.hasPrefix(Self.sandboxIdentifierPrefix) ?? false) ? .sandbox : .production
    }
}
