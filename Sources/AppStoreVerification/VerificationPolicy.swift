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
        self.init(checkedBundleId: bundleId, appAppleId: appAppleId, environment: environment)
    }

    /// A policy for V1 bodies only, which carry no app Apple id: it requires none, in any environment.
    ///
    /// A verifier made with it must be given V1 bodies alone (``NotificationVerifier/verify(body:version:)`` with
    /// ``NotificationVersion/v1``): a V2 body in Production would go without the app Apple id check.
    /// - Throws: ``VerificationConfigurationError`` when `bundleId` is empty.
    package static func v1(bundleId: String, environment: AppStoreEnvironment) throws(VerificationConfigurationError)
        -> VerificationPolicy
    {
        guard !bundleId.isEmpty else {
            throw VerificationConfigurationError(code: .missingBundleID, reason: "the bundle id must not be empty")
        }
        return VerificationPolicy(checkedBundleId: bundleId, appAppleId: nil, environment: environment)
    }

    private init(checkedBundleId bundleId: String, appAppleId: Int64?, environment: AppStoreEnvironment) {
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
