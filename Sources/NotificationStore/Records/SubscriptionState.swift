#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row of `subscriptions`: a subscription's state as its newest notification (by `signedDate`) left it.
///
/// Every field is the newest notification's own value; nil means that notification did not carry it.
public struct SubscriptionState: Sendable, Hashable, Codable {
    public var originalTransactionId: String
    public var lastNotificationUUID: UUID
    public var lastNotificationType: String
    public var lastSubtype: String?
    public var lastSignedDate: Date
    public var transactionId: String?
    public var productId: String?
    public var expiresDate: Date?
    /// 0 off, 1 on (Apple's `autoRenewStatus`).
    public var autoRenewStatus: Int?
    public var revocationDate: Date?
    public var environment: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    /// When this row last changed.
    public var updatedAt: Date

    /// Creates a state.
    public init(
        originalTransactionId: String,
        lastNotificationUUID: UUID,
        lastNotificationType: String,
        lastSubtype: String? = nil,
        lastSignedDate: Date,
        transactionId: String? = nil,
        productId: String? = nil,
        expiresDate: Date? = nil,
        autoRenewStatus: Int? = nil,
        revocationDate: Date? = nil,
        environment: String? = nil,
        bundleId: String? = nil,
        appAppleId: Int64? = nil,
        updatedAt: Date
    ) {
        self.originalTransactionId = originalTransactionId
        self.lastNotificationUUID = lastNotificationUUID
        self.lastNotificationType = lastNotificationType
        self.lastSubtype = lastSubtype
        self.lastSignedDate = lastSignedDate
        self.transactionId = transactionId
        self.productId = productId
        self.expiresDate = expiresDate
        self.autoRenewStatus = autoRenewStatus
        self.revocationDate = revocationDate
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.updatedAt = updatedAt
    }
}
