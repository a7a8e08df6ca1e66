/// A decoded app transaction (`signedAppTransactionInfo`): the customer's purchase of the app itself.
public struct AppTransaction: Sendable, Hashable, Codable {
    /// The server environment that signed the app transaction (Apple calls it the receipt type).
    public var receiptType: AppStoreEnvironment?
    /// The unique identifier of the app in the App Store.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The app version the transaction applies to.
    public var applicationVersion: String?
    /// The version identifier of the app in the App Store.
    public var versionExternalIdentifier: Int64?
    /// When the App Store created the app transaction, in milliseconds since 1970.
    public var receiptCreationDate: Int64?
    /// When the customer originally bought the app, in milliseconds since 1970.
    public var originalPurchaseDate: Int64?
    /// The app version the customer originally bought.
    public var originalApplicationVersion: String?
    /// The device verification value (base64 SHA-384).
    public var deviceVerification: String?
    /// The UUID used to compute ``deviceVerification``.
    public var deviceVerificationNonce: String?
    /// When the customer pre-ordered the app, in milliseconds since 1970.
    public var preorderDate: Int64?
    /// The unique identifier of the app transaction.
    public var appTransactionId: String?
    /// The platform on which the customer originally bought the app.
    public var originalPlatform: PurchasePlatform?
    /// When the App Store signed the app transaction, in milliseconds since 1970.
    public var signedDate: Int64?

    /// Creates a value; fields left out are absent, as when Apple omits them. This package's signer builds
    /// notifications with it; users receive values from the verifier or decode Apple's JSON.
    package init(
        receiptType: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        applicationVersion: String? = nil,
        versionExternalIdentifier: Int64? = nil,
        receiptCreationDate: Int64? = nil,
        originalPurchaseDate: Int64? = nil,
        originalApplicationVersion: String? = nil,
        deviceVerification: String? = nil,
        deviceVerificationNonce: String? = nil,
        preorderDate: Int64? = nil,
        appTransactionId: String? = nil,
        originalPlatform: PurchasePlatform? = nil,
        signedDate: Int64? = nil
    ) {
        self.receiptType = receiptType
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.preorderDate = preorderDate
        self.appTransactionId = appTransactionId
        self.originalPlatform = originalPlatform
        self.signedDate = signedDate
    }
}
