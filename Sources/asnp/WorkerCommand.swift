import AppStoreVerification
import ArgumentParser
import Foundation
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import PipelineStatus
import ServiceLifecycle
import UnixSignals
import Worker

/// `asnp worker`: a member of the worker consumer group.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Verify raw notifications from Kafka and store them in PostgreSQL; run one per container.",
        discussion: """
            Settings come from the environment and, with --config, a JSON file (the environment wins); \
            Config/README.md lists them. Required: kafka.bootstrapServers, apps.names and apps.{name}.bundleId, \
            database.url (DATABASE_URL). Offsets are committed only after a batch's transaction committed; a batch \
            that cannot be stored is retried, never skipped. Add workers to scale: partitions are shared in the \
            consumer group. SIGTERM or SIGINT: finish the batch in hand, leave the group, exit 0.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Flag(help: "Apply missing schema migrations before consuming (otherwise the schema must be current).")
    var migrate = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        var logger = Logger(label: "asnp.worker")
        logger.logLevel = logLevel
        let settings = try await PipelineSettings.load(file: config)
        let role = try settings.workerRole()
        let (cluster, workerConfiguration, database) = (role.cluster, role.worker, role.database)
        let directory = VerifierDirectory(
            apps: role.apps,
            chainVerifier: ChainVerifier(configuration: .init(trustedRoots: role.trustedRoots))
        )
        let store = NotificationStore(configuration: database, logger: logger)
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(cluster: cluster), logger: logger)
        let worker = Worker(
            configuration: workerConfiguration,
            verifiers: directory,
            store: store,
            producer: producer,
            logger: logger
        )
        let statusServer = StatusServer(
            configuration: role.status,
            registry: worker.metrics.registry,
            logger: logger,
            live: { worker.liveness() },
            ready: { worker.readiness() },
            beforeScrape: { await worker.sampleMetrics() }
        )
        logger.info(
            "Starting a worker",
            metadata: [
                "kafka.group": "\(workerConfiguration.consumer.groupID)",
                "kafka.topic": "\(workerConfiguration.consumer.topics.joined(separator: ","))",
                "database": "\(database.redactedURL)",
                "apps": "\(role.apps.map(\.description).joined(separator: "; "))",
            ]
        )
        // Services stop in reverse order: the worker finishes its batch, then the status endpoints close, the
        // producer flushes the output events, and the store's pool closes.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: store), .init(service: producer), .init(service: statusServer),
                    .init(service: SchemaGate(store: store, migrate: migrate, worker: worker)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
        logger.info("Worker stopped")
    }
}

/// Checks (or migrates) the schema, then runs the worker: consuming before the tables exist would only fail batches.
struct SchemaGate: Service {
    let store: NotificationStore
    let migrate: Bool
    let worker: Worker

    func run() async throws {
        if migrate {
            _ = try await store.migrate()
        } else {
            try await store.checkSchema()
        }
        try await worker.run()
    }
}
