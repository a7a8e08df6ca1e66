extension HistorySync {
    /// What a sync does when asking Apple for a page failed: the one place its error policy is decided.
    package enum PageFailure: Sendable, Hashable {
        /// The task was cancelled (a graceful shutdown): stop; the ledger holds every page produced, and the next run
        /// resumes there.
        case stop
        /// The pagination token expired, or Apple does not know the token a resumed range holds (tokens live for a
        /// limited time): start the range again from its first page; the workers drop what is fed twice.
        case restartRange
        /// Apple no longer keeps the range's start: what lies before its limit is lost, the rest is asked again.
        case rangeGone
        /// Anything else: note it on the range in the ledger and give up this sync.
        case fail

        /// The policy for `error`, from a request that carried a pagination token when `resuming`.
        package init(_ error: HistorySyncError, resuming: Bool) {
            if error.code == .cancelled {
                self = .stop
            } else if error.appleErrorCode == AppStoreServerAPIClient.paginationTokenExpired
                || (error.appleErrorCode == AppStoreServerAPIClient.invalidPaginationToken && resuming)
            {
                self = .restartRange
            } else if error.code == .rangeGone {
                self = .rangeGone
            } else {
                self = .fail
            }
        }
    }
}
