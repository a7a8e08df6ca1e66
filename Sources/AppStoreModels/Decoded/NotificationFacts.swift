/// The flat facts of a notification that the pipeline keys, orders and indexes by.
///
/// The field names are part of the `asnp verify` output contract. Each value comes from one place: the environment
/// from V2's `data`, the transaction fields from the decoded transaction, the renewal status from the decoded
/// renewal info, so a notification shape without that member reports nil rather than a guess.
package struct NotificationFacts: Sendable, Hashable, Codable {
    /// The V2 `notificationType` or V1 `notification_type`.
    package var notificationType: String?
    /// The V2 `subtype`.
    package var subtype: String?
    /// The V2 `notificationUUID`, the deduplication key.
    package var notificationUUID: String?
    /// When the App Store signed the notification, in milliseconds since 1970.
    package var signedDate: Int64?
    /// `data.environment` for V2; `Sandbox` or `Production` for V1.
    package var environment: String?
    /// The original transaction id: the decoded transaction's for V2, the resolved one for V1.
    package var originalTransactionId: String?
    /// The decoded transaction's `transactionId`.
    package var transactionId: String?
    /// The decoded transaction's `productId`.
    package var productId: String?
    /// The decoded transaction's `expiresDate`, in milliseconds since 1970.
    package var expiresDate: Int64?
    /// The decoded transaction's `revocationDate`, in milliseconds since 1970.
    package var revocationDate: Int64?
    /// The decoded renewal info's `autoRenewStatus` (0 off, 1 on).
    package var autoRenewStatus: Int?
    /// `summary.requestIdentifier`.
    package var requestIdentifier: String?
    /// `summary.succeededCount`.
    package var succeededCount: Int64?
    /// `externalPurchaseToken.externalPurchaseId`.
    package var externalPurchaseId: String?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        notificationType: String? = nil,
        subtype: String? = nil,
        notificationUUID: String? = nil,
        signedDate: Int64? = nil,
        environment: String? = nil,
        originalTransactionId: String? = nil,
        transactionId: String? = nil,
        productId: String? = nil,
        expiresDate: Int64? = nil,
        revocationDate: Int64? = nil,
        autoRenewStatus: Int? = nil,
        requestIdentifier: String? = nil,
        succeededCount: Int64? = nil,
        externalPurchaseId: String? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.productId = productId
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.autoRenewStatus = autoRenewStatus
        self.requestIdentifier = requestIdentifier
        self.succeededCount = succeededCount
        self.externalPurchaseId = externalPurchaseId
    }
}

extension NotificationFacts {
    /// The facts of a decoded V2 notification.
    package init(_ notification: DecodedNotificationV2) {
        let payload = notification.payload
        self.init(
            notificationType: payload.notificationType?.rawValue,
            subtype: payload.subtype?.rawValue,
            notificationUUID: payload.notificationUUID,
            signedDate: payload.signedDate,
            environment: payload.data?.environment?.rawValue,
            originalTransactionId: notification.transactionInfo?.originalTransactionId,
            transactionId: notification.transactionInfo?.transactionId,
            productId: notification.transactionInfo?.productId,
            expiresDate: notification.transactionInfo?.expiresDate,
            revocationDate: notification.transactionInfo?.revocationDate,
            autoRenewStatus: notification.renewalInfo?.autoRenewStatus?.rawValue,
            requestIdentifier: payload.summary?.requestIdentifier,
            succeededCount: payload.summary?.succeededCount,
            externalPurchaseId: payload.externalPurchaseToken?.externalPurchaseId
        )
    }

    /// The facts of a V1 notification; V1 has no UUID or signed date, so those stay nil.
    package init(_ notification: StatusUpdateNotification) {
        self.init(
            notificationType: notification.notificationType,
            environment: notification.resolvedEnvironment?.rawValue,
            originalTransactionId: notification.resolvedOriginalTransactionId
        )
    }

    /// The facts of a decoded notification of either version.
    package init(_ notification: DecodedNotification) {
        switch notification {
        case .v1(let v1): self.init(v1)
        case .v2(let v2): self.init(v2)
        }
    }
}
