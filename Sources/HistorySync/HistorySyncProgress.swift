import NotificationStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a history sync stands: reported after every page, and returned at the end. The counts are this run's.
package struct HistorySyncProgress: Sendable, Hashable {
    /// The ledger the sync works in.
    package var key: HistoryLedger.Key
    /// The window asked for, its end clamped to what Apple's history may already hold (``HistorySync/Configuration/settleTime``).
    package var window: Range<Date>
    /// Pages and notifications put on the raw topic.
    package var pages = 0
    package var notifications = 0
    /// History items without a `signedPayload` (nothing to feed).
    package var skippedItems = 0
    /// Notifications Apple reports at least one failed delivery attempt for, by the last attempt's result.
    package var failedDeliveries: [String: Int] = [:]
    /// Ranges fetched to their last page.
    package var coveredRanges: [Range<Date>] = []
    /// Ranges recorded as no longer fetchable (older than Apple keeps).
    package var lostRanges: [Range<Date>] = []
    /// In-progress ranges an earlier run had started, continued at their saved page.
    package var resumedRanges = 0
    /// Times a range started over because Apple's pagination token expired.
    package var restarts = 0
    /// Pages a second look at covered ranges fetched (``HistorySync/Configuration/secondLook``).
    package var secondLookPages = 0
    /// Notifications a second look found that no earlier request of the ledger had listed: Apple listed them late.
    /// They are among ``notifications``.
    package var secondLookNotifications = 0
    /// Every part of the window is covered or lost, and its second look, if any, done.
    package var isComplete = false
    /// The API client's requests, 429s and retries.
    package var requests = AppStoreServerAPIClient.Counts()

    package init(key: HistoryLedger.Key, window: Range<Date>) {
        self.key = key
        self.window = window
    }
}
