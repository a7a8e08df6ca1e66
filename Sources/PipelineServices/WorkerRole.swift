import AppStoreVerification
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import PipelineStatus
import PipelineTracing
import PostgresRuntime
import ServiceLifecycle
import Worker

/// `asnp worker`: one member of the worker consumer group, with its store, output producer and status endpoints.
package struct WorkerRole: PipelineRole {
    package let store: NotificationStore
    package let producer: KafkaProducer
    package let worker: Worker
    /// Samples the gauges that need PostgreSQL or Kafka, so that scrapes never wait on them.
    package let metricsSampler: WorkerMetricsSampler
    /// Makes the months of body partitions ahead.
    package let partitionMaintenance: BodyPartitionMaintenance
    package let statusServer: StatusServer
    /// Checks (or applies) the schema, then runs the worker.
    package let schemaGate: SchemaGate
    /// The batches' spans and their export (`tracing.*`).
    package let tracing: TracingBackend

    /// Stopped in reverse: the worker finishes its batch, then the status endpoints close, the producer flushes the
    /// output events, the store's pool closes, and the last spans are exported.
    package var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        (tracing.service.map { [.init(service: $0)] } ?? []) + [
            .init(service: store), .init(service: producer), .init(service: statusServer),
            .init(service: metricsSampler), .init(service: partitionMaintenance), .init(service: schemaGate),
        ]
    }
}

/// Builds a worker from its settings; with `migrate`, missing schema migrations are applied before consuming.
package func buildWorker(_ settings: WorkerRoleSettings, migrate: Bool, logger: Logger) throws -> WorkerRole {
    let directory = VerifierDirectory(
        apps: settings.apps,
        chainVerifier: ChainVerifier(configuration: .init(trustedRoots: settings.trustedRoots))
    )
    let store = NotificationStore(configuration: settings.database, logger: logger)
    let producer = try KafkaProducer(
        configuration: KafkaProducerConfiguration(cluster: settings.cluster),
        logger: logger
    )
    let tracing = try TracingBackend.make(settings.tracing, logger: logger)
    let worker = Worker(
        configuration: settings.worker,
        verifiers: directory,
        store: store,
        producer: producer,
        tracer: tracing.tracer,
        logger: logger
    )
    let metricsSampler = WorkerMetricsSampler(
        configuration: settings.worker,
        store: store,
        metrics: worker.metrics,
        logger: logger
    )
    let statusServer = StatusServer(
        configuration: settings.status,
        registry: worker.metrics.registry,
        logger: logger,
        live: { worker.liveness() },
        ready: { worker.readiness() },
        beforeScrape: { metricsSampler.recordAges() }
    )
    logger.info(
        "Starting a worker",
        metadata: [
            "kafka.group": "\(settings.worker.consumer.groupID)",
            "kafka.topic": "\(settings.worker.consumer.topics.joined(separator: ","))",
            "database": "\(settings.database.redactedURL)",
            "apps": "\(settings.apps.map(\.description).joined(separator: "; "))",
        ]
    )
    return WorkerRole(
        store: store,
        producer: producer,
        worker: worker,
        metricsSampler: metricsSampler,
        partitionMaintenance: BodyPartitionMaintenance(store: store, logger: logger),
        statusServer: statusServer,
        schemaGate: SchemaGate(store: store, migrate: migrate, worker: worker),
        tracing: tracing
    )
}

/// Checks (or migrates) the schema, then runs the worker: consuming before the tables exist would only fail batches.
package struct SchemaGate: Service {
    let store: NotificationStore
    let migrate: Bool
    let worker: Worker

    package func run() async throws {
        if migrate {
            _ = try await store.migrate()
        } else {
            try await store.checkSchema()
        }
        try await worker.run()
    }
}
