import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// Counts of the tables' rows by type and status. Each count reads its whole table (as `count(*)` does): meant
    /// for an operator's look, not for a dashboard polled every few seconds (use the worker's metrics for that).
    package func counts() async throws(NotificationStoreError) -> PipelineCounts {
        let logger = self.logger
        return try await withConnection("counting the tables' rows") { connection in
            func grouped(_ query: PostgresQuery) async throws -> [String: Int] {
                var counts: [String: Int] = [:]
                for try await (key, count) in try await connection.query(query, logger: logger).decode(
                    (String, Int).self
                ) {
                    counts[key] = count
                }
                return counts
            }
            let notifications = try await grouped(
                "SELECT notification_type, count(*)::bigint FROM notifications GROUP BY 1"
            )
            let subscriptions = try await grouped(
                "SELECT last_notification_type, count(*)::bigint FROM subscriptions GROUP BY 1"
            )
            let rejected = try await grouped("SELECT status, count(*)::bigint FROM rejected_notifications GROUP BY 1")
            let notReplayed =
                try await grouped(
                    "SELECT 'all', count(*)::bigint FROM rejected_notifications WHERE replayed_at IS NULL"
                )["all"] ?? 0
            let outbox = try await grouped("SELECT 'all', count(*)::bigint FROM outbox")["all"] ?? 0
            var lastReceivedAt: Date?
            for try await date in try await connection.query(
                "SELECT max(received_at) FROM notifications",
                logger: logger
            ).decode(Date?.self) {
                lastReceivedAt = date
            }
            return PipelineCounts(
                notificationsByType: notifications,
                subscriptionsByLastType: subscriptions,
                rejectedByStatus: rejected,
                rejectedNotReplayed: notReplayed,
                outboxRows: outbox,
                lastReceivedAt: lastReceivedAt
            )
        }
    }
}
