import AppStoreModels
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The reconciler as a service beside the workers: for every app and environment it syncs, a turn every `interval`
/// from the ledger's last unbroken run (the first turn: the last `lookback`) up to now, with the same filter every
/// turn, then a second look at what earlier turns covered of the last ``HistorySync/Configuration/secondLook``. A failed turn's
/// range stays in the ledger, in progress or not yet fetched, and the next turn takes it up first, however many turns
/// failed or however long the service was down (within Apple's limits: older parts are recorded as lost). No failure
/// stops the service: an error that needs a person (a refused key) is noted on its range, logged and counted as a
/// failed turn, for the alerts. Stops at graceful shutdown after the page in hand.
package struct PeriodicHistorySync: Service {
    /// One sync per app and environment; their turns run side by side (Apple's rate limits are per app).
    package let syncs: [HistorySync]
    package let filter: NotificationHistoryFilter
    package let interval: Duration
    package let lookback: Duration
    package let logger: Logger
    /// A turn in progress for longer than this is stuck, and ``liveness()`` says so: three intervals (the
    /// `AsnpHistorySyncStale` alert's horizon), and never under two hours, twice the longest wait the API client
    /// accepts from Apple for one request (a `Retry-After` up to an hour).
    package var stuckAfter: Duration
    /// Called after each turn with its outcome.
    package var onTurn: @Sendable (Result<HistorySyncProgress, HistorySyncError>) -> Void = { _ in }
    /// When the turns in progress started, by sync; absent between turns.
    private let turnsStarted = TurnStarts()

    /// - Precondition: `syncs` is not empty, and its syncs share one metrics registry (the status server's).
    package init(
        syncs: [HistorySync],
        filter: NotificationHistoryFilter = .none,
        interval: Duration,
        lookback: Duration,
        logger: Logger
    ) {
        precondition(!syncs.isEmpty, "a periodic history sync needs an app and environment to sync")
        self.syncs = syncs
        self.filter = filter
        self.interval = interval
        self.lookback = lookback
        self.logger = logger
        stuckAfter = max(interval * 3, .seconds(7_200))
    }

    /// Why the service is not live, or nil: a turn has been in progress for longer than ``stuckAfter``. Waiting
    /// between turns is always live.
    package func liveness() -> String? {
        let stuck = turnsStarted.value.withLock { started in
            started.filter { $0.value.duration(to: .now) > stuckAfter }.keys.sorted()
        }
        guard !stuck.isEmpty else { return nil }
        return "a history sync turn has been in progress for more than \(stuckAfter): \(stuck.joined(separator: ", "))"
    }

    package func run() async throws {
        await withDiscardingTaskGroup { group in
            for sync in syncs {
                group.addTask { await turns(of: sync) }
            }
        }
    }

    /// The turns of one app and environment until cancelled or shut down gracefully. Not cancelled on a graceful
    /// shutdown: the turn in progress finishes its page (the sync checks for the shutdown between pages); only the
    /// wait between turns is cut short.
    private func turns(of sync: HistorySync) async {
        let name = "\(sync.appName) \(sync.environment.rawValue)"
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            // The lookback ends where the window does, the settle time before now.
            let lookbackStart = sync.configuration.clock.now().addingTimeInterval(
                -HistorySync.seconds(lookback) - HistorySync.seconds(sync.configuration.settleTime)
            )
            do throws(HistorySyncError) {
                let progress = try await turn(of: sync, name: name, from: lookbackStart)
                onTurn(.success(progress))
            } catch {
                onTurn(.failure(error))
                if error.isRetriable {
                    logger.warning(
                        "History sync turn failed; its range is taken up again at the next turn",
                        metadata: ["history.app": "\(name)", "error": "\(error)"]
                    )
                } else {
                    logger.error(
                        "History sync turn failed with an error that needs a person; trying again at the next turn",
                        metadata: ["history.app": "\(name)", "error": "\(error)"]
                    )
                }
            }
            try? await cancelWhenGracefulShutdown { try await sync.configuration.clock.sleep(for: interval) }
        }
    }

    /// One turn, measured: its pages as they are produced (a failed turn's too), then its outcome and duration.
    private func turn(
        of sync: HistorySync,
        name: String,
        from start: Date
    ) async throws(HistorySyncError) -> HistorySyncProgress {
        let started = ContinuousClock.now
        turnsStarted.value.withLock { $0[name] = started }
        defer { _ = turnsStarted.value.withLock { $0.removeValue(forKey: name) } }
        do {
            let progress = try await sync.sync(from: start, filter: filter, continuingLedger: true, lookingAgain: true)
            // A turn stopped by a graceful shutdown is neither a success nor a failure: the process is going away.
            if progress.isComplete { sync.metrics.recordTurn(succeeded: true, duration: started.duration(to: .now)) }
            return progress
        } catch {
            sync.metrics.recordTurn(succeeded: false, duration: started.duration(to: .now))
            throw error
        }
    }
}

/// When each turn in progress started, shared with the status server's liveness probe.
private final class TurnStarts: Sendable {
    let value = Mutex<[String: ContinuousClock.Instant]>([:])
}
