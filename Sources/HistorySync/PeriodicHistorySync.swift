import AppStoreModels
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The reconciler as a service beside the workers: every `interval`, syncs the last `lookback` of history (windows
/// overlap, so a notification Apple sent near a boundary is fetched twice and deduplicated by the workers).
/// Stops at graceful shutdown after the page in hand; a failed turn is logged and tried again at the next one,
/// except when Apple refuses the key or the request (those need a person). A window partly older than Apple keeps is
/// fetched from the oldest start Apple accepts; Apple refusing the start anyway (`RANGE_GONE`) fails only the turn.
package struct PeriodicHistorySync: Service {
    package let sync: HistorySync
    package let environment: AppStoreEnvironment
    package let interval: Duration
    package let lookback: Duration
    package let logger: Logger
    /// Turns, pages and notifications, labelled with the sync's app and `environment`.
    package let metrics: HistorySyncMetrics
    /// A turn in progress for longer than this is stuck, and ``liveness()`` says so: three intervals (the
    /// `AsnpHistorySyncStale` alert's horizon), and never under two hours, twice the longest wait the API client
    /// accepts from Apple for one request (a `Retry-After` up to an hour).
    package var stuckAfter: Duration
    /// Called after each turn with its outcome.
    package var onTurn: @Sendable (Result<HistorySyncProgress, HistorySyncError>) -> Void = { _ in }
    /// When the turn in progress started; nil between turns.
    private let turnStarted = TurnStart()

    package init(
        sync: HistorySync,
        environment: AppStoreEnvironment,
        interval: Duration,
        lookback: Duration,
        logger: Logger
    ) {
        self.sync = sync
        self.environment = environment
        self.interval = interval
        self.lookback = lookback
        self.logger = logger
        metrics = HistorySyncMetrics(app: sync.appName, environment: environment)
        stuckAfter = max(interval * 3, .seconds(7_200))
    }

    /// Why the service is not live, or nil: a turn has been in progress for longer than ``stuckAfter``. Waiting
    /// between turns is always live.
    package func liveness() -> String? {
        guard let started = turnStarted.value.withLock({ $0 }), started.duration(to: .now) > stuckAfter else {
            return nil
        }
        return "a history sync turn has been in progress for more than \(stuckAfter)"
    }

    package func run() async throws {
        // Not cancelled on a graceful shutdown: the turn in progress finishes its page (the sync checks for the
        // shutdown between pages); only the wait between turns is cut short.
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            // Whole minutes, so a restarted service finds the checkpoint of the window it was in.
            let end = (Date().timeIntervalSince1970 / 60).rounded(.down) * 60
            let lookbackSeconds = Double(lookback.components.seconds)
            let request = NotificationHistoryRequest(
                start: Date(timeIntervalSince1970: end - lookbackSeconds),
                end: Date(timeIntervalSince1970: end)
            )
            do throws(HistorySyncError) {
                let progress = try await turn(request)
                onTurn(.success(progress))
            } catch {
                onTurn(.failure(error))
                if error.code == .rangeGone {
                    // Not retriable, but no person can bring the range back either: the next turn asks from later.
                    logger.notice(
                        "Apple no longer keeps part of this turn's window; going on with the next turn",
                        metadata: ["error": "\(error)"]
                    )
                } else {
                    guard error.isRetriable else { throw error }
                    logger.warning("History sync turn failed; trying at the next turn", metadata: ["error": "\(error)"])
                }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One turn, measured: its pages as they are produced (a failed turn's too), then its outcome and duration.
    private func turn(_ request: NotificationHistoryRequest) async throws(HistorySyncError) -> HistorySyncProgress {
        let started = ContinuousClock.now
        turnStarted.value.withLock { $0 = started }
        defer { turnStarted.value.withLock { $0 = nil } }
        let counted = Mutex(0)
        do {
            let progress = try await sync.sync(request, environment: environment) { progress in
                // Called once a page, with the turn's running totals.
                let before = counted.withLock { count in
                    defer { count = progress.notificationsThisRun }
                    return count
                }
                metrics.countPage(notifications: progress.notificationsThisRun - before)
            }
            // A turn stopped by a graceful shutdown is neither a success nor a failure: the process is going away.
            if progress.isComplete { metrics.recordTurn(succeeded: true, duration: started.duration(to: .now)) }
            return progress
        } catch {
            metrics.recordTurn(succeeded: false, duration: started.duration(to: .now))
            throw error
        }
    }
}

/// The start of the turn in progress, shared with the status server's liveness probe.
private final class TurnStart: Sendable {
    let value = Mutex<ContinuousClock.Instant?>(nil)
}
