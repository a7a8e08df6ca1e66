import AppStoreModels
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The reconciler as a service beside the workers: every `interval`, syncs the last `lookback` of history (windows
/// overlap, so a notification Apple sent near a boundary is fetched twice and deduplicated by the workers).
/// Stops at graceful shutdown after the page in hand; a failed turn is logged and tried again at the next one,
/// except when Apple refuses the key or the request (those need a person).
package struct PeriodicHistorySync: Service {
    package let sync: HistorySync
    package let environment: AppStoreEnvironment
    package let interval: Duration
    package let lookback: Duration
    package let logger: Logger
    /// Called after each turn with its outcome.
    package var onTurn: @Sendable (Result<HistorySyncProgress, HistorySyncError>) -> Void = { _ in }

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
                let progress = try await sync.sync(request, environment: environment)
                onTurn(.success(progress))
            } catch {
                onTurn(.failure(error))
                guard error.isRetriable else { throw error }
                logger.warning("History sync turn failed; trying at the next turn", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
