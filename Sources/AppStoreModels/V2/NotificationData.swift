/// The app metadata and signed transaction information of a V2 notification (Apple's `data` object).
public struct NotificationData: Sendable, Hashable, Codable {
    /// The unique identifier of the app in the App Store; absent in the sandbox.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The version of the build that identifies an iteration of the bundle.
    public var bundleVersion: String?
    /// The reason the customer requested a refund (`CONSUMPTION_REQUEST` only).
    public var consumptionRequestReason: ConsumptionRequestReason?
    /// The server environment the notification applies to.
    public var environment: AppStoreEnvironment?
    /// Subscription renewal information (JWS), decoding to ``JWSRenewalInfoDecodedPayload``.
    public var signedRenewalInfo: String?
    /// Transaction information (JWS), decoding to ``JWSTransactionDecodedPayload``.
    public var signedTransactionInfo: String?
    /// The status of an auto-renewable subscription at the time of the notification.
    public var status: SubscriptionStatus?

    /// Creates a value; fields left out are absent, as when Apple omits them. This package's signer builds
    /// notifications with it; users receive values from the verifier or decode Apple's JSON.
    package init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        bundleVersion: String? = nil,
        consumptionRequestReason: ConsumptionRequestReason? = nil,
        environment: AppStoreEnvironment? = nil,
        signedRenewalInfo: String? = nil,
        signedTransactionInfo: String? = nil,
        status: SubscriptionStatus? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.consumptionRequestReason = consumptionRequestReason
        self.environment = environment
        self.signedRenewalInfo = signedRenewalInfo
        self.signedTransactionInfo = signedTransactionInfo
        self.status = status
    }
}
