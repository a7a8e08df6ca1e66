import AppStoreTestSupport
import HistorySync
import Testing

@Suite("The history sync's policy for a page request that failed", .tags(.fast))
struct PageFailureTests {
    typealias PageFailure = HistorySync.PageFailure

    static func apple(_ code: Int) -> HistorySyncError {
        HistorySyncError(.rejected, "Apple refused the request", appleErrorCode: code, httpStatus: 400)
    }

    @Test("A cancelled request stops the sync, resuming or not")
    func cancelledStops() {
        let cancelled = HistorySyncError(.cancelled, "shutting down")
        #expect(PageFailure(cancelled, resuming: false) == .stop)
        #expect(PageFailure(cancelled, resuming: true) == .stop)
    }

    @Test("An expired token restarts the range; a token Apple does not know restarts it only when one was sent")
    func tokensRestart() {
        let expired = Self.apple(AppStoreServerAPIClient.paginationTokenExpired)
        let invalid = Self.apple(AppStoreServerAPIClient.invalidPaginationToken)
        #expect(PageFailure(expired, resuming: true) == .restartRange)
        #expect(PageFailure(expired, resuming: false) == .restartRange)
        #expect(PageFailure(invalid, resuming: true) == .restartRange)
        // Without a token of ours, "invalid pagination token" is not about a stale token: a failure to report.
        #expect(PageFailure(invalid, resuming: false) == .fail)
    }

    @Test("A range Apple no longer keeps is recorded as lost; anything else fails the sync")
    func rangeGoneAndTheRest() {
        #expect(
            PageFailure(HistorySyncError(.rangeGone, "too old", appleErrorCode: 4_000_012), resuming: false)
                == .rangeGone
        )
        for code in [HistorySyncError.Code.unauthorized, .rejected, .unavailable, .malformedResponse, .kafka, .store] {
            #expect(PageFailure(HistorySyncError(code, "failed"), resuming: true) == .fail, "\(code)")
        }
    }
}
