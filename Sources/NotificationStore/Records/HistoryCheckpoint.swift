#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the reconciler stands in one window of Apple's notification history (a `history_sync` row).
package struct HistoryCheckpoint: Sendable, Hashable {
    /// The window and filter: together they name the checkpoint.
    package struct Window: Sendable, Hashable, CustomStringConvertible {
        package var bundleID: String
        /// `Production` or `Sandbox`.
        package var environment: String
        package var start: Date
        package var end: Date
        /// The request's filter in a stable text form, empty when none.
        package var filter: String

        package init(bundleID: String, environment: String, start: Date, end: Date, filter: String = "") {
            self.bundleID = bundleID
            self.environment = environment
            self.start = start
            self.end = end
            self.filter = filter
        }

        package var description: String {
            "\(bundleID) \(environment) \(start.formatted(.iso8601))..<\(end.formatted(.iso8601))"
                + (filter.isEmpty ? "" : " \(filter)")
        }
    }

    package var window: Window
    /// The token for the next page; nil before the first page and once the window is complete.
    package var paginationToken: String?
    package var pagesFetched: Int
    package var notificationsFetched: Int
    /// Set once the last page was produced.
    package var completedAt: Date?

    package init(
        window: Window,
        paginationToken: String? = nil,
        pagesFetched: Int = 0,
        notificationsFetched: Int = 0,
        completedAt: Date? = nil
    ) {
        self.window = window
        self.paginationToken = paginationToken
        self.pagesFetched = pagesFetched
        self.notificationsFetched = notificationsFetched
        self.completedAt = completedAt
    }
}
