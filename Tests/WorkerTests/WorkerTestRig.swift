import AppStoreTestSupport
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import PipelineTestSupport
import PostgresRuntime
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
    ///   - verifiers: what the workers verify with; the fixtures' test root (``WorkerPipelineTests/directory()``)
    ///     unless given.
    static func run(
        partitions: Int,
        outputPartitions: Int? = nil,
        server: TestPostgresServer? = nil,
        configure: (inout NotificationStoreConfiguration) -> Void = { _ in },
        separateOutputCluster: Bool = false,
        outputDeliveryTimeout: Duration? = nil,
        outputProperties: [String: String] = [:],
        configureWorker: @escaping @Sendable (inout WorkerConfiguration) -> Void = { _ in },
        verifiers: VerifierDirectory? = nil,
        _ body: (WorkerTestRig, _ startWorker: () throws -> Worker) async throws -> Void
    ) async throws {
        let directory = try verifiers ?? WorkerPipelineTests.directory()
        // A worker stops within two store operations (its batch in flight, the outbox's last publication) and its
        // consumer's wait for rebalances before leaving (a session timeout); the rig allows for the operations.
        try await PipelineRig.run(
            label: "test.worker",
            rawPartitions: partitions,
            outputPartitions: separateOutputCluster ? nil : outputPartitions,
            server: server,
            configure: configure,
            stopLimit: WorkerPipelineTests.sessionTimeout
        ) { base in
            let outputMock = separateOutputCluster ? try KafkaMockCluster(brokers: 1, logger: base.logger) : base.mock
            if separateOutputCluster, let outputPartitions {
                try PipelineRig.createOutputTopics(on: outputMock, partitions: outputPartitions)
            }
            var outputConfiguration = KafkaProducerConfiguration(cluster: outputMock.clusterConfiguration)
            outputConfiguration.deliveryTimeout = outputDeliveryTimeout ?? outputConfiguration.deliveryTimeout
            outputConfiguration.cluster.additionalProperties.merge(outputProperties) { $1 }
            let separateOutputProducer =
                separateOutputCluster || outputDeliveryTimeout != nil || !outputProperties.isEmpty
            let outputProducer =
                separateOutputProducer
                ? try KafkaProducer(configuration: outputConfiguration, logger: base.logger) : base.producer
            if separateOutputProducer {
                base.services.start("the output producer") { try await outputProducer.run() }
            }
            let rig = WorkerTestRig(
                logger: base.logger,
                mock: base.mock,
                outputMock: outputMock,
                server: base.server,
                database: base.database,
                producer: base.producer,
                store: base.store
            )
            var workers = 0
            func startWorker() -> Worker {
                var configuration = WorkerPipelineTests.workerConfiguration(base.mock)
                configureWorker(&configuration)
                let worker = Worker(
                    configuration: configuration,
                    verifiers: directory,
                    store: base.store,
                    producer: outputProducer,
                    logger: base.logger
                )
                workers += 1
                base.services.start("worker \(workers)") { try await worker.run() }
                return worker
            }
            try await body(rig, startWorker)
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

    /// Waits until the tables hold `notifications` and `rejected` rows (``WorkerPipelineTests/waitForRows``) and
    /// expects them, saying what they held last when they do not.
    func expectRows(
        notifications: Int,
        rejected: Int,
        _ comment: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let stored = try await WorkerPipelineTests.waitForRows(
            server,
            database.database,
            notifications: notifications,
            rejected: rejected
        )
        #expect(
            stored == "\(notifications)/\(rejected)",
            "\(comment) notifications/rejected rows: \(stored), no change for the last minute",
            sourceLocation: sourceLocation
        )
    }
}
