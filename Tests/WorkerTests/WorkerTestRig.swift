import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import StoreTestSupport
import Testing
import Worker

/// What a worker test runs against: a mock cluster with the raw topic (and the output topics), a migrated database,
/// and a producer and a store that run while the test does.
struct WorkerTestRig {
    let logger: Logger
    let mock: KafkaMockCluster
    /// Where the workers publish: `mock`, or a cluster of its own (to fail the output brokers alone).
    let outputMock: KafkaMockCluster
    let server: TestPostgresServer
    let database: NotificationStoreConfiguration
    let producer: KafkaProducer
    let store: NotificationStore

    /// Runs `body` with a rig; `startWorker` starts one more worker on it. Everything is cancelled afterwards.
    ///
    /// - Parameters:
    ///   - server: a dedicated server for a test that stops it; the shared one otherwise.
    ///   - configure: changes the store settings after migrating (which uses the default timeouts).
    ///   - separateOutputCluster: the workers publish to a mock cluster of their own (``outputMock``).
    ///   - outputDeliveryTimeout, outputProperties: the workers' producer's, which is the rig's own unless one of
    ///     these or `separateOutputCluster` is given.
    ///   - configureWorker: changes the workers' settings.
    static func run(
        partitions: Int,
        outputPartitions: Int? = nil,
        server: TestPostgresServer? = nil,
        configure: (inout NotificationStoreConfiguration) -> Void = { _ in },
        separateOutputCluster: Bool = false,
        outputDeliveryTimeout: Duration? = nil,
        outputProperties: [String: String] = [:],
        configureWorker: @escaping @Sendable (inout WorkerConfiguration) -> Void = { _ in },
        _ body: (WorkerTestRig, _ startWorker: () throws -> Worker) async throws -> Void
    ) async throws {
        let logger = WorkerPipelineTests.logger()
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        try mock.createTopic(WorkerPipelineTests.topic, partitions: partitions)
        let outputMock = separateOutputCluster ? try KafkaMockCluster(brokers: 1, logger: logger) : mock
        if let outputPartitions {
            let outputs = OutputTopics()
            for topic in [outputs.decoded, outputs.subscriptionState, outputs.deadLetter] {
                try outputMock.createTopic(topic, partitions: outputPartitions)
            }
        }
        let postgres: TestPostgresServer
        if let server { postgres = server } else { postgres = try await TestPostgresServer.shared() }
        var database = try await postgres.makeDatabase()
        try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
            _ = try await store.migrate()
        }
        configure(&database)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(cluster: mock.clusterConfiguration),
            logger: logger
        )
        var outputConfiguration = KafkaProducerConfiguration(cluster: outputMock.clusterConfiguration)
        outputConfiguration.deliveryTimeout = outputDeliveryTimeout ?? outputConfiguration.deliveryTimeout
        outputConfiguration.cluster.additionalProperties.merge(outputProperties) { $1 }
        let separateOutputProducer = separateOutputCluster || outputDeliveryTimeout != nil || !outputProperties.isEmpty
        let outputProducer =
            separateOutputProducer ? try KafkaProducer(configuration: outputConfiguration, logger: logger) : producer
        let store = NotificationStore(configuration: database, logger: logger)
        let rig = WorkerTestRig(
            logger: logger,
            mock: mock,
            outputMock: outputMock,
            server: postgres,
            database: database,
            producer: producer,
            store: store
        )
        let directory = try WorkerPipelineTests.directory()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await producer.run() }
            if separateOutputProducer { tasks.addTask { try await outputProducer.run() } }
            tasks.addTask { try await store.run() }
            func startWorker() -> Worker {
                var configuration = WorkerPipelineTests.workerConfiguration(mock)
                configureWorker(&configuration)
                let worker = Worker(
                    configuration: configuration,
                    verifiers: directory,
                    store: store,
                    producer: outputProducer,
                    logger: logger
                )
                tasks.addTask { try await worker.run() }
                return worker
            }
            try await body(rig, startWorker)
            tasks.cancelAll()
        }
    }

    /// Checks the output topics against the tables with kcat, once the outbox is empty (``OutputReconciliation``),
    /// and expects no problem.
    func expectOutputsReconciled(_ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let server = server
        let database = database.database
        let outputs = try await OutputReconciliation.check(
            bootstrapServers: outputMock.clusterConfiguration.bootstrapServers.joined(separator: ",")
        ) { try await server.psql(database, $0) }
        #expect(outputs.problems.isEmpty, "\(comment) \(outputs.problems)", sourceLocation: sourceLocation)
    }

    /// `notifications` and `rejected_notifications` row counts as `n/r`, once they are as expected (or after 60 s).
    func waitForRows(notifications: Int, rejected: Int) async throws -> String {
        try await WorkerPipelineTests.waitForRows(
            server,
            database.database,
            notifications: notifications,
            rejected: rejected
        )
    }
}
