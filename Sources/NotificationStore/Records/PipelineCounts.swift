#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the tables hold, for `asnp status`.
package struct PipelineCounts: Sendable, Hashable, Codable {
    /// Stored notifications by `notificationType`.
    package var notificationsByType: [String: Int]
    /// Subscriptions by the type of their newest notification (by `signedDate`).
    package var subscriptionsByLastType: [String: Int]
    /// Rejected notifications by status.
    package var rejectedByStatus: [String: Int]
    /// Rejected notifications not yet replayed.
    package var rejectedNotReplayed: Int
    /// Outbox rows waiting to be published.
    package var outboxRows: Int
    /// When the newest stored notification was received.
    package var lastReceivedAt: Date?

    package var notifications: Int { notificationsByType.values.reduce(0, +) }
    package var subscriptions: Int { subscriptionsByLastType.values.reduce(0, +) }
    package var rejected: Int { rejectedByStatus.values.reduce(0, +) }

    /// Counts as given.
    package init(
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
