import AppStoreVerification
import Foundation
import Ingress
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import PipelineTracing
import PostgresRuntime
import ServiceLifecycle
import Worker
import X509

/// What `asnp dev` runs: the whole pipeline on one machine, with librdkafka's mock cluster in the process.
package struct DevStackConfiguration: Sendable {
    /// The app served (one).
    package var app: PipelineApp
    /// The store, already reachable (`asnp dev` starts a local PostgreSQL or takes a URL).
    package var database: NotificationStoreConfiguration
    /// The roots the workers trust.
    package var trustedRoots: [Certificate]
    /// The ingress's port on 127.0.0.1 (0 picks a free one).
    package var httpPort = 8080
    /// How many workers, all in this process.
    package var workers = 2
    /// Partitions of each topic in the mock cluster.
    package var partitions = 8
    /// How the ingress and the workers export their spans (each under its role's service name); nil: no tracing.
    package var tracing: TracingConfiguration?

    package init(app: PipelineApp, database: NotificationStoreConfiguration, trustedRoots: [Certificate]) {
        self.app = app
        self.database = database
        self.trustedRoots = trustedRoots
    }
}

/// The dev stack, built: the mock cluster (with the raw and output topics), the schema applied, and the services
/// of the ingress and the workers.
package struct DevStack: PipelineRole {
    package let mock: KafkaMockCluster
    package let ingressConfiguration: IngressConfiguration
    package let outputTopics: OutputTopics
    package let migration: MigrationReport
    package let store: NotificationStore
    package let workers: [Worker]
    package let ingress: IngressServer
    let producers: [KafkaProducer]
    /// The ingress's and the workers' span exporters (none without a tracing endpoint).
    let tracing: [TracingBackend]

    /// Started in order and stopped in reverse: the ingress stops first, then the workers, the producers
    /// (flushing), the store, and last the span exporters.
    package var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        tracing.compactMap(\.service).map { .init(service: $0) }
            + [.init(service: store), .init(service: BodyPartitionMaintenance(store: store, logger: store.logger))]
            + producers.map { .init(service: $0) } + workers.map { .init(service: $0) } + [.init(service: ingress)]
    }
}

/// Starts the mock cluster, creates its topics, applies the migrations and builds the ingress and workers;
/// `onListening` is called with the ingress's port once it accepts connections.
package func buildDevStack(
    _ configuration: DevStackConfiguration,
    logger: Logger,
    onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
) async throws -> DevStack {
    // Named as the roles name themselves, so that a trace shows which part did what.
    func tracing(_ serviceName: String) throws -> TracingBackend {
        guard var tracing = configuration.tracing else { return .off }
        tracing.serviceName = serviceName
        return try TracingBackend.make(tracing, logger: logger)
    }
    let ingressTracing = try tracing("asnp-ingress")
    let workerTracing = try tracing("asnp-worker")
    let mock = try KafkaMockCluster(brokers: 1, logger: logger)
    let outputs = OutputTopics()
    var ingressConfiguration = IngressConfiguration(apps: [configuration.app])
    ingressConfiguration.host = "127.0.0.1"
    ingressConfiguration.port = configuration.httpPort
    for topic in [ingressConfiguration.rawTopic, outputs.decoded, outputs.subscriptionState, outputs.deadLetter] {
        try mock.createTopic(topic, partitions: configuration.partitions)
    }
    let migration = try await NotificationStore.withRunning(configuration: configuration.database, logger: logger) {
        try await $0.migrate()
    }

    let ingressProducer = try KafkaProducer(
        configuration: ingressConfiguration.producerConfiguration(cluster: mock.clusterConfiguration),
        logger: logger
    )
    let outputProducer = try KafkaProducer(
        configuration: KafkaProducerConfiguration(cluster: mock.clusterConfiguration),
        logger: logger
    )
    let store = NotificationStore(configuration: configuration.database, logger: logger)
    let verifiers = VerifierDirectory(
        apps: ingressConfiguration.apps,
        chainVerifier: ChainVerifier(configuration: .init(trustedRoots: configuration.trustedRoots))
    )
    var consumer = KafkaConsumerConfiguration(
        cluster: mock.clusterConfiguration,
        groupID: "asnp-workers",
        topics: [ingressConfiguration.rawTopic]
    )
    // The workers share this process: a rebalance that waits for a member should not take production's 45 s.
    consumer.sessionTimeout = .seconds(10)
    consumer.heartbeatInterval = .seconds(1)
    let workerConfiguration = WorkerConfiguration(consumer: consumer)
    let workers = (0..<configuration.workers).map { _ in
        Worker(
            configuration: workerConfiguration,
            verifiers: verifiers,
            store: store,
            producer: outputProducer,
            tracer: workerTracing.tracer,
            logger: logger
        )
    }
    let ingress = try IngressServer(
        configuration: ingressConfiguration,
        producer: ingressProducer,
        tracer: ingressTracing.tracer,
        logger: logger,
        onListening: onListening
    )
    return DevStack(
        mock: mock,
        ingressConfiguration: ingressConfiguration,
        outputTopics: outputs,
        migration: migration,
        store: store,
        workers: workers,
        ingress: ingress,
        producers: [outputProducer, ingressProducer],
        tracing: [ingressTracing, workerTracing]
    )
}
