#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the reconciler stands in one window of Apple's notification history (a `history_sync` row).
public struct HistoryCheckpoint: Sendable, Hashable {
    /// The window and filter: together they name the checkpoint.
    public struct Window: Sendable, Hashable, CustomStringConvertible {
        public var bundleID: String
        /// `Production` or `Sandbox`.
        public var environment: String
        public var start: Date
        public var end: Date
        /// The request's filter in a stable text form, empty when none.
        public var filter: String

        public init(bundleID: String, environment: String, start: Date, end: Date, filter: String = "") {
            self.bundleID = bundleID
            self.environment = environment
            self.start = start
            self.end = end
            self.filter = filter
        }

        public var description: String {
            "\(bundleID) \(environment) \(start.formatted(.iso8601))..<\(end.formatted(.iso8601))"
                + (filter.isEmpty ? "" : " \(filter)")
        }
    }

    public var window: Window
    /// The token for the next page; nil before the first page and once the window is complete.
    public var paginationToken: String?
    public var pagesFetched: Int
    public var notificationsFetched: Int
    /// Set once the last page was produced.
    public var completedAt: Date?

    public init(
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
