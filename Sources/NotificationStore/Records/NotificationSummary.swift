#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A stored notification's facts (a row of `notifications` without its JSON and raw body): one step of a
/// subscription's timeline.
public struct StoredNotificationSummary: Sendable, Hashable, Codable {
    public var notificationUUID: UUID
    /// 1 or 2.
    public var version: Int
    public var notificationType: String
    public var subtype: String?
    /// Nil for V1, which has no signed date.
    public var signedDate: Date?
    public var environment: String?
    public var originalTransactionId: String?
    public var transactionId: String?
    public var productId: String?
    public var expiresDate: Date?
    public var revocationDate: Date?
    public var autoRenewStatus: Int?
    public var receivedAt: Date
    /// Where the worker read it.
    public var kafkaTopic: String
    public var kafkaPartition: Int32
    public var kafkaOffset: Int64
}
