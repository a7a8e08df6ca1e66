import CommandSupport
import Foundation
import NotificationStore

/// A subscription's current state and its notifications, oldest first: `asnp subscription show`.
package struct SubscriptionReport: Encodable {
    package var state: SubscriptionState
    package var notifications: [StoredNotificationSummary]

    package init(state: SubscriptionState, notifications: [StoredNotificationSummary]) {
        self.state = state
        self.notifications = notifications
    }

    /// The subscription `originalTransactionId` with at most `limit` notifications; nil when none is stored.
    package static func read(
        from store: NotificationStore,
        originalTransactionId: String,
        limit: Int
    ) async throws -> SubscriptionReport? {
        guard let state = try await store.subscription(originalTransactionId: originalTransactionId) else {
            return nil
        }
        let notifications = try await store.notifications(originalTransactionId: originalTransactionId, limit: limit)
        return SubscriptionReport(state: state, notifications: notifications)
    }

    /// The state, then the notifications.
    package func text(now: Date = Date()) -> String {
        func optional(_ value: String?) -> String { value ?? "-" }
        var lines = Self.stateLines(state, now: now)
        lines += ["", "notifications (\(notifications.count)), oldest first:"]
        let widths = [26, 28, 22, 20, 0]
        lines.append(
            TextColumns.line(["signedDate", "type", "subtype", "transaction", "notificationUUID"], widths: widths)
        )
        for notification in notifications {
            lines.append(
                TextColumns.line(
                    [
                        notification.signedDate.map(Self.time) ?? "- (V1)", notification.notificationType,
                        optional(notification.subtype), optional(notification.transactionId),
                        notification.notificationUUID.uuidString.lowercased(),
                    ],
                    widths: widths
                )
            )
        }
        return lines.joined(separator: "\n")
    }
}
