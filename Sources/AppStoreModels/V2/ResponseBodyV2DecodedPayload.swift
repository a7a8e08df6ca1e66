/// The decoded payload of an App Store Server Notification V2.
///
/// Exactly one of ``data``, ``summary``, ``externalPurchaseToken`` and ``appData`` is present; ``content`` names it.
public struct ResponseBodyV2DecodedPayload: Sendable, Hashable, Codable {
    /// The in-app purchase event the notification describes.
    public var notificationType: NotificationType?
    /// Details of the event; absent for types without one.
    public var subtype: NotificationSubtype?
    /// A unique identifier of the notification; Apple's retries repeat it, so it is the deduplication key.
    public var notificationUUID: String?
    /// The App Store Server Notification version, `"2.0"`.
    public var version: String?
    /// When the App Store signed the payload, in milliseconds since 1970.
    public var signedDate: Int64?
    /// App metadata and the signed transaction and renewal information.
    public var data: NotificationData?
    /// The result of a renewal-date extension request for many subscribers (`RENEWAL_EXTENSION` / `SUMMARY`).
    public var summary: NotificationSummary?
    /// An external purchase token (`EXTERNAL_PURCHASE_TOKEN`).
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// App metadata and the signed app transaction (for example `RESCIND_CONSENT`).
    public var appData: AppData?

    /// Creates a value; fields left out are absent, as when Apple omits them. This package's signer builds
    /// notifications with it; users receive values from the verifier or decode Apple's JSON.
    package init(
        notificationType: NotificationType? = nil,
        subtype: NotificationSubtype? = nil,
        notificationUUID: String? = nil,
        version: String? = nil,
        signedDate: Int64? = nil,
        data: NotificationData? = nil,
        summary: NotificationSummary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil,
        appData: AppData? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = version
        self.signedDate = signedDate
        self.data = data
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
    }
}

extension ResponseBodyV2DecodedPayload {
    /// Which of the mutually exclusive payload members a notification carries.
    public enum Content: Sendable, Hashable {
        /// ``ResponseBodyV2DecodedPayload/data``: an in-app purchase event.
        case data(NotificationData)
        /// ``ResponseBodyV2DecodedPayload/summary``: a renewal-date extension for many subscribers.
        case summary(NotificationSummary)
        /// ``ResponseBodyV2DecodedPayload/externalPurchaseToken``: an external purchase token.
        case externalPurchaseToken(ExternalPurchaseToken)
        /// ``ResponseBodyV2DecodedPayload/appData``: about the app itself.
        case appData(AppData)
        /// None of the known members: a shape Apple may add in the future.
        case unknown
    }

    /// The payload member present, checked in Apple's order (data, summary, externalPurchaseToken, appData).
    public var content: Content {
        if let data { return .data(data) }
        if let summary { return .summary(summary) }
        if let externalPurchaseToken { return .externalPurchaseToken(externalPurchaseToken) }
        if let appData { return .appData(appData) }
        return .unknown
    }
}
