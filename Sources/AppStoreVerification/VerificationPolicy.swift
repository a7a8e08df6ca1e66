import AppStoreModels

/// What a verified notification must claim: the app it is for and the environment it comes from.
public struct VerificationPolicy: Sendable, Hashable {
    /// The app's bundle identifier; every signed member must carry it where Apple's format has one.
    public var bundleId: String
    /// The app's Apple identifier; required for, and only checked in, the production environment (the sandbox
    /// sends none), as Apple's libraries do.
    public var appAppleId: Int64?
    /// The environment notifications must come from.
    public var environment: AppStoreEnvironment

    /// Creates a policy.
    /// - Throws: ``VerificationConfigurationError`` when the environment is production and `appAppleId` is nil.
    public init(bundleId: String, appAppleId: Int64? = nil, environment: AppStoreEnvironment) throws {
        guard !bundleId.isEmpty else {
            throw VerificationConfigurationError(code: .missingBundleID, reason: "the bundle id must not be empty")
        }
        if environment == .production, appAppleId == nil {
            throw VerificationConfigurationError(
                code: .missingAppAppleID,
                reason: "the app Apple id is required for the Production environment"
            )
        }
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
    }

    /// Whether signatures and chains are checked: Xcode and StoreKit-testing data are not signed by the App Store,
    /// so Apple's libraries skip those checks there (the environment is still enforced).
    package var checksSignatures: Bool {
        environment != .xcode && environment != .localTesting
    }
}
