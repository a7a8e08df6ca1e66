import AppStoreModels
import HistorySync
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import PipelineStatus
import ServiceLifecycle

/// `asnp history sync`: Apple's notification history for a window (or periodically) onto the raw topic.
package struct HistorySyncRole: PipelineRole {
    package let store: NotificationStore
    package let producer: KafkaProducer
    package let sync: HistorySync
    /// The window (or the periodic turns); ends the group when done.
    package let job: any Service
    /// The periodic sync's probes and metrics; nil for one window.
    package let statusServer: StatusServer?

    /// The job ends the group when it is done; then the status endpoints close, the producer flushes and the
    /// store's pool closes.
    package var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        [.init(service: store), .init(service: producer)] + (statusServer.map { [.init(service: $0)] } ?? [])
            + [.init(service: job, successTerminationBehavior: .gracefullyShutdownGroup)]
    }
}

/// What a history sync covers: one window to its end, or the last `lookback` every `interval`.
package enum HistorySyncSchedule: Sendable {
    /// One window; `progress` is called after every page, `finished` at the end (or at a graceful shutdown).
    case window(
        NotificationHistoryRequest,
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

/// Builds the reconciler for one app and environment.
package func buildHistorySync(
    _ settings: HistoryRoleSettings,
    environment: AppStoreEnvironment,
    schedule: HistorySyncSchedule,
    logger: Logger
) throws -> HistorySyncRole {
    let store = NotificationStore(configuration: settings.database, logger: logger)
    let producer = try KafkaProducer(
        configuration: KafkaProducerConfiguration(cluster: settings.cluster),
        logger: logger
    )
    let client = AppStoreServerAPIClient(
        configuration: settings.api,
        rateLimiter: RequestRateLimiter(requestsPerSecond: settings.requestsPerSecond),
        logger: logger
    )
    let sync = HistorySync(
        client: client,
        producer: producer,
        store: store,
        appName: settings.app.name,
        rawTopic: settings.rawTopic,
        logger: logger
    )
    let job: any Service
    var statusServer: StatusServer?
    switch schedule {
    case .window(let request, let restart, let progress, let finished):
        job = HistoryWindowJob(
            sync: sync,
            request: request,
            environment: environment,
            restart: restart,
            progress: progress,
            finished: finished
        )
    case .periodic(let interval, let lookback, let turn):
        var periodic = PeriodicHistorySync(
            sync: sync,
            environment: environment,
            interval: interval,
            lookback: lookback,
            logger: logger
        )
        periodic.onTurn = turn
        job = periodic
        statusServer = periodic.statusServer(configuration: settings.status, logger: logger)
    }
    return HistorySyncRole(store: store, producer: producer, sync: sync, job: job, statusServer: statusServer)
}

extension PeriodicHistorySync {
    /// The periodic sync's ``StatusServer``: `/metrics` serves its ``HistorySyncMetrics``; `/health/live` fails
    /// while a turn is stuck (``liveness()``); `/health/ready` answers 200 once the server listens, since the sync
    /// serves no traffic and must not turn unready with Apple's API (failed turns are the alerts' business).
    package func statusServer(
        configuration: StatusServerConfiguration,
        logger: Logger,
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> StatusServer {
        StatusServer(
            configuration: configuration,
            registry: metrics.registry,
            logger: logger,
            live: { liveness() },
            ready: { nil },
            onListening: onListening
        )
    }
}

/// One window, to its end (or to a graceful shutdown, after the page in hand).
struct HistoryWindowJob: Service {
    let sync: HistorySync
    let request: NotificationHistoryRequest
    let environment: AppStoreEnvironment
    let restart: Bool
    let progress: @Sendable (HistorySyncProgress) -> Void
    let finished: @Sendable (HistorySyncProgress) -> Void

    func run() async throws {
        // The sync itself stops between pages on a graceful shutdown, after producing and checkpointing its page.
        let outcome = try await sync.sync(request, environment: environment, restart: restart) { progress($0) }
        finished(outcome)
    }
}
