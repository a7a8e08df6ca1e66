import PipelineContract

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row of `subscriptions`: a subscription's state as its newest notification (by `signedDate`) left it.
///
/// Every field is the newest notification's own value; nil means that notification did not carry it.
package struct SubscriptionState: Sendable, Hashable, Codable {
    package var originalTransactionId: String
    package var lastNotificationUUID: UUID
    package var lastNotificationType: String
    package var lastSubtype: String?
    package var lastSignedDate: Date
    package var transactionId: String?
    package var productId: String?
    package var expiresDate: Date?
    /// 0 off, 1 on (Apple's `autoRenewStatus`).
    package var autoRenewStatus: Int?
    package var revocationDate: Date?
    package var environment: String?
    package var bundleId: String?
    package var appAppleId: Int64?
    /// When this row last changed.
    package var updatedAt: Date

    /// Creates a state.
    package init(
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

extension SubscriptionState {
    /// What the state topic's event of this state says in its headers.
    package var eventAttributes: OutputEvent.StateAttributes {
        OutputEvent.StateAttributes(
            originalTransactionID: originalTransactionId,
            lastNotificationUUID: lastNotificationUUID,
            lastSignedDate: lastSignedDate,
            environment: environment,
            bundleID: bundleId
        )
    }
}
