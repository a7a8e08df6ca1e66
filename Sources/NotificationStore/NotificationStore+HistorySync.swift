import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// The reconciler's checkpoint for `window`, if it ever started it.
    package func historyCheckpoint(
        for window: HistoryCheckpoint.Window
    ) async throws(NotificationStoreError) -> HistoryCheckpoint? {
        let logger = self.logger
        return try await withConnection("reading the history checkpoint of \(window)") { connection in
            let rows = try await connection.query(
                """
                SELECT pagination_token, pages_fetched, notifications_fetched, completed_at
                FROM history_sync
                WHERE bundle_id = \(window.bundleID) AND environment = \(window.environment)
                    AND window_start = \(window.start) AND window_end = \(window.end) AND filter = \(window.filter)
                """,
                logger: logger
            )
            for try await (token, pages, notifications, completedAt) in rows.decode(
                (String?, Int64, Int64, Date?).self
            ) {
                return HistoryCheckpoint(
                    window: window,
                    paginationToken: token,
                    pagesFetched: Int(pages),
                    notificationsFetched: Int(notifications),
                    completedAt: completedAt
                )
            }
            return nil
        }
    }

    /// Records `checkpoint` (after its page's notifications are on the raw topic), creating the row if needed.
    package func saveHistoryCheckpoint(_ checkpoint: HistoryCheckpoint) async throws(NotificationStoreError) {
        let logger = self.logger
        let window = checkpoint.window
        _ = try await withConnection("saving the history checkpoint of \(window)") { connection in
            try await connection.query(
                """
                INSERT INTO history_sync (bundle_id, environment, window_start, window_end, filter, pagination_token,
                    pages_fetched, notifications_fetched, completed_at)
                VALUES (\(window.bundleID), \(window.environment), \(window.start), \(window.end), \(window.filter),
                    \(checkpoint.paginationToken), \(Int64(checkpoint.pagesFetched)),
                    \(Int64(checkpoint.notificationsFetched)), \(checkpoint.completedAt))
                ON CONFLICT ON CONSTRAINT history_sync_window_key DO UPDATE SET
                    pagination_token = EXCLUDED.pagination_token,
                    pages_fetched = EXCLUDED.pages_fetched,
                    notifications_fetched = EXCLUDED.notifications_fetched,
                    completed_at = EXCLUDED.completed_at,
                    updated_at = now()
                """,
                logger: logger
            )
        }
    }
}
