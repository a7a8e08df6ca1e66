import NotificationStore

/// Where a history sync stands: reported after every page, and returned at the end.
public struct HistorySyncProgress: Sendable, Hashable {
    public var window: HistoryCheckpoint.Window
    /// Pages and notifications put on the raw topic for this window, over every run (the checkpoint's counts).
    public var pages = 0
    public var notifications = 0
    /// Pages and notifications this run.
    public var pagesThisRun = 0
    public var notificationsThisRun = 0
    /// History items without a `signedPayload` (nothing to feed), this run.
    public var skippedItems = 0
    /// Times the window started over because Apple's pagination token expired.
    public var restarts = 0
    /// This run continued a window an earlier run had started.
    public var resumed = false
    /// Every page was produced.
    public var isComplete = false
    /// The API client's requests, 429s and retries, this run.
    public var requests = AppStoreServerAPIClient.Counts()

    public init(window: HistoryCheckpoint.Window) {
        self.window = window
    }
}
