#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A stored notification's facts (a row of `notifications` without its JSON and raw body): one step of a
/// subscription's timeline.
package struct StoredNotificationSummary: Sendable, Hashable, Codable {
    package var notificationUUID: UUID
    /// 1 or 2.
    package var version: Int
    package var notificationType: String
    package var subtype: String?
    /// Nil for V1, which has no signed date.
    package var signedDate: Date?
    package var environment: String?
    package var originalTransactionId: String?
    package var transactionId: String?
    package var productId: String?
    package var expiresDate: Date?
    package var revocationDate: Date?
    package var autoRenewStatus: Int?
    package var receivedAt: Date
    /// Where the worker read it.
    package var kafkaTopic: String
    package var kafkaPartition: Int32
    package var kafkaOffset: Int64
}
