import NotificationStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a history sync stands: reported after every page, and returned at the end.
package struct HistorySyncProgress: Sendable, Hashable {
    package var window: HistoryCheckpoint.Window
    /// Pages and notifications put on the raw topic for this window, over every run (the checkpoint's counts).
    package var pages = 0
    package var notifications = 0
    /// Pages and notifications this run.
    package var pagesThisRun = 0
    package var notificationsThisRun = 0
    /// History items without a `signedPayload` (nothing to feed), this run.
    package var skippedItems = 0
    /// Times the window started over because Apple's pagination token expired.
    package var restarts = 0
    /// This run continued a window an earlier run had started.
    package var resumed = false
    /// Set when the window starts before the oldest history Apple keeps (with ``HistorySync/startDateMargin``): the
    /// range from the window's start to this date was skipped as no longer fetchable; the rest was asked for.
    package var unfetchableBefore: Date?
    /// Every page was produced (of the fetchable part of the window).
    package var isComplete = false
    /// The API client's requests, 429s and retries, this run.
    package var requests = AppStoreServerAPIClient.Counts()

    package init(window: HistoryCheckpoint.Window) {
        self.window = window
    }
}
