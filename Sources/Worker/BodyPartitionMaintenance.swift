import Logging
import NotificationStore
import ServiceLifecycle

/// Makes the partitions of `notification_bodies` for the coming months ahead of the batches that need them
/// (``NotificationStore/bodyMonthsAhead`` months after the current one), at start and every ``interval``, a minute
/// after a failure: so that no batch transaction creates a partition, whose lock would hold every writer behind any
/// long reader. Each month is made in a short transaction of its own with a lock timeout
/// (``NotificationStore/makeBodyPartitions(monthsAhead:now:)``); every worker runs one, and all but the first find
/// the months made. `asnp_store_body_months_ahead` shows the months made, and an alert fires before they run out.
package final class BodyPartitionMaintenance: Service, Sendable {
    private let store: NotificationStore
    private let logger: Logger
    /// How often the months are made sure of: a new month is needed once a month, and three are made ahead.
    static let interval: Duration = .seconds(3_600)
    /// How soon a failed run is tried again.
    static let retryInterval: Duration = .seconds(60)

    package init(store: NotificationStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Makes the months ahead until graceful shutdown or cancellation.
    package func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            var pause = Self.interval
            do {
                try await store.makeBodyPartitions(monthsAhead: NotificationStore.bodyMonthsAhead)
            } catch let error where error.code == .schemaNotReady {
                // A worker that migrates does so as it starts, beside this.
                pause = Self.retryInterval
                logger.debug("No schema to make body partitions in yet", metadata: ["error": "\(error)"])
            } catch {
                pause = Self.retryInterval
                logger.warning(
                    "The body partitions of the coming months could not be made; trying again in a minute",
                    metadata: ["error": "\(error)"]
                )
            }
            let wait = pause
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
        }
    }
}
