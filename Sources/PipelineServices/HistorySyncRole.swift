import AppStoreModels
import HistorySync
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import PipelineStatus
import PipelineTracing
import Prometheus
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `asnp history sync`: Apple's notification history for a window (or periodically) onto the raw topic, for every
/// app and environment selected.
package struct HistorySyncRole: PipelineRole {
    package let store: NotificationStore
    package let producer: KafkaProducer
    /// One per app and environment.
    package let syncs: [HistorySync]
    /// The window (or the periodic turns); ends the group when done.
    package let job: any Service
    /// The periodic sync's probes and metrics; nil for one window.
    package let statusServer: StatusServer?
    /// The syncs' and pages' spans and their export (`tracing.*`).
    package let tracing: TracingBackend

    /// The job ends the group when it is done; then the status endpoints close, the producer flushes, the store's
    /// pool closes, and the last spans are exported.
    package var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        (tracing.service.map { [.init(service: $0)] } ?? [])
            + [.init(service: store), .init(service: producer)] + (statusServer.map { [.init(service: $0)] } ?? [])
            + [.init(service: job, successTerminationBehavior: .gracefullyShutdownGroup)]
    }
}

/// What a history sync covers, with one filter: one window, or periodic turns up to now.
package enum HistorySyncSchedule: Sendable {
    /// `start` to `end` (nil: now); `progress` is called after every page, `finished` at the end of each app and
    /// environment (or at a graceful shutdown).
    case window(
        start: Date,
        end: Date?,
        restart: Bool,
        progress: @Sendable (HistorySyncProgress) -> Void,
        finished: @Sendable (HistorySyncProgress) -> Void
    )
    /// Periodic turns; `turn` is called with each turn's outcome.
    case periodic(
        interval: Duration,
        lookback: Duration,
        turn: @Sendable (Result<HistorySyncProgress, HistorySyncError>) -> Void
    )
}

/// Builds the reconciler for the apps and environments of `settings`: a sync for each, with a client (and a rate
/// limiter: Apple's limits are per app) of its own, and metrics in one registry.
package func buildHistorySync(
    _ settings: HistoryRoleSettings,
    filter: NotificationHistoryFilter = .none,
    schedule: HistorySyncSchedule,
    clock: any HistoryClock = SystemHistoryClock(),
    logger: Logger
) throws -> HistorySyncRole {
    let store = NotificationStore(configuration: settings.database, logger: logger)
    let producer = try KafkaProducer(
        configuration: KafkaProducerConfiguration(cluster: settings.cluster),
        logger: logger
    )
    let registry = PrometheusCollectorRegistry()
    let tracing = try TracingBackend.make(settings.tracing, logger: logger)
    let syncs = settings.apps.flatMap { app in
        settings.environments.map { environment in
            let client = AppStoreServerAPIClient(
                configuration: app.api,
                rateLimiter: RequestRateLimiter(requestsPerSecond: settings.requestsPerSecond),
                logger: logger
            )
            var configuration = HistorySync.Configuration()
            configuration.clock = clock
            configuration.secondLook = settings.secondLook
            return HistorySync(
                client: client,
                environment: environment,
                producer: producer,
                store: store,
                appName: app.app.name,
                rawTopic: settings.rawTopic,
                metrics: HistorySyncMetrics(app: app.app.name, environment: environment, registry: registry),
                configuration: configuration,
                tracer: tracing.tracer,
                logger: logger
            )
        }
    }
    let job: any Service
    var statusServer: StatusServer?
    switch schedule {
    case .window(let start, let end, let restart, let progress, let finished):
        job = HistoryWindowJob(
            syncs: syncs,
            start: start,
            end: end,
            filter: filter,
            restart: restart,
            progress: progress,
            finished: finished
        )
    case .periodic(let interval, let lookback, let turn):
        var periodic = PeriodicHistorySync(
            syncs: syncs,
            filter: filter,
            interval: interval,
            lookback: lookback,
            logger: logger
        )
        periodic.onTurn = turn
        job = periodic
        statusServer = periodic.statusServer(configuration: settings.status, registry: registry, logger: logger)
    }
    return HistorySyncRole(
        store: store,
        producer: producer,
        syncs: syncs,
        job: job,
        statusServer: statusServer,
        tracing: tracing
    )
}

extension PeriodicHistorySync {
    /// The periodic sync's ``StatusServer``: `/metrics` serves `registry`, its syncs' ``HistorySyncMetrics``; `/health/live` fails
    /// while a turn is stuck (``liveness()``); `/health/ready` answers 200 once the server listens, since the sync
    /// serves no traffic and must not turn unready with Apple's API (failed turns are the alerts' business).
    package func statusServer(
        configuration: StatusServerConfiguration,
        registry: PrometheusCollectorRegistry,
        logger: Logger,
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> StatusServer {
        StatusServer(
            configuration: configuration,
            registry: registry,
            logger: logger,
            live: { liveness() },
            ready: { nil },
            onListening: onListening
        )
    }
}

/// One window, to its end (or to a graceful shutdown, after the page in hand), for each app and environment in turn.
struct HistoryWindowJob: Service {
    let syncs: [HistorySync]
    let start: Date
    let end: Date?
    let filter: NotificationHistoryFilter
    let restart: Bool
    let progress: @Sendable (HistorySyncProgress) -> Void
    let finished: @Sendable (HistorySyncProgress) -> Void

    /// A failure of one app or environment does not keep the others from syncing: the first failure is thrown once
    /// every other has had its turn.
    func run() async throws {
        var firstFailure: HistorySyncError?
        for sync in syncs {
            do throws(HistorySyncError) {
                // The sync stops between pages on a graceful shutdown, after producing and recording its page.
                let outcome = try await sync.sync(from: start, to: end, filter: filter, restart: restart) {
                    progress($0)
                }
                finished(outcome)
                guard outcome.isComplete else { break }
            } catch {
                if error.code == .cancelled { break }
                var named = error
                named.reason = "\(sync.ledgerKey(filter)): \(error.reason)"
                firstFailure = firstFailure ?? named
            }
        }
        if let firstFailure { throw firstFailure }
    }
}
