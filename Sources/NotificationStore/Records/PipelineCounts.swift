#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the tables hold, for `asnp status`.
public struct PipelineCounts: Sendable, Hashable, Codable {
    /// Stored notifications by `notificationType`.
    public var notificationsByType: [String: Int]
    /// Subscriptions by the type of their newest notification (by `signedDate`).
    public var subscriptionsByLastType: [String: Int]
    /// Rejected notifications by status.
    public var rejectedByStatus: [String: Int]
    /// Rejected notifications not yet replayed.
    public var rejectedNotReplayed: Int
    /// Outbox rows waiting to be published.
    public var outboxRows: Int
    /// When the newest stored notification was received.
    public var lastReceivedAt: Date?

    public var notifications: Int { notificationsByType.values.reduce(0, +) }
    public var subscriptions: Int { subscriptionsByLastType.values.reduce(0, +) }
    public var rejected: Int { rejectedByStatus.values.reduce(0, +) }

    /// Counts as given.
    public init(
        notificationsByType: [String: Int],
        subscriptionsByLastType: [String: Int],
        rejectedByStatus: [String: Int],
        rejectedNotReplayed: Int,
        outboxRows: Int,
        lastReceivedAt: Date?
    ) {
        self.notificationsByType = notificationsByType
        self.subscriptionsByLastType = subscriptionsByLastType
        self.rejectedByStatus = rejectedByStatus
        self.rejectedNotReplayed = rejectedNotReplayed
        self.outboxRows = outboxRows
        self.lastReceivedAt = lastReceivedAt
    }
}
