#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What Apple's notification history says of its attempts to deliver one notification that at least one attempt
/// failed for (a `history_deliveries` row): the ones the live path may have missed, and why.
package struct HistoryDelivery: Sendable, Hashable {
    package var bundleID: String
    /// `Production` or `Sandbox`.
    package var environment: String
    package var notificationUUID: UUID
    /// The last attempt's time and `sendAttemptResult` (`TIMED_OUT`, `SUCCESS`, ...).
    package var lastAttemptAt: Date?
    package var lastResult: String
    /// Attempts Apple reported.
    package var attempts: Int
    /// Whether any attempt succeeded (Apple got a 2xx from the ingress).
    package var everSucceeded: Bool

    package init(
        bundleID: String,
        environment: String,
        notificationUUID: UUID,
        lastAttemptAt: Date?,
        lastResult: String,
        attempts: Int,
        everSucceeded: Bool
    ) {
        self.bundleID = bundleID
        self.environment = environment
        self.notificationUUID = notificationUUID
        self.lastAttemptAt = lastAttemptAt
        self.lastResult = lastResult
        self.attempts = attempts
        self.everSucceeded = everSucceeded
    }

    /// The failed deliveries of one app and environment with one last result: `asnp status` lists them.
    package struct Summary: Sendable, Hashable, Encodable {
        package var bundleID: String
        package var environment: String
        package var lastResult: String
        /// Notifications whose last attempt had this result.
        package var notifications: Int
        /// Of those, the ones no attempt delivered.
        package var neverDelivered: Int
        /// The latest last attempt among them.
        package var latestAttemptAt: Date?

        package init(
            bundleID: String,
            environment: String,
            lastResult: String,
            notifications: Int,
            neverDelivered: Int,
            latestAttemptAt: Date?
        ) {
            self.bundleID = bundleID
            self.environment = environment
            self.lastResult = lastResult
            self.notifications = notifications
            self.neverDelivered = neverDelivered
            self.latestAttemptAt = latestAttemptAt
        }
    }
}
