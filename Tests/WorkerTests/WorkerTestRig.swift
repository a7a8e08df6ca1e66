import AppStoreTestSupport
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import StoreTestSupport
import Synchronization
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
        // A store whose pool does not close in time says which connections it still has: worth seeing in a run.
        var storeLogger = logger
        storeLogger.logLevel = min(logger.logLevel, .error)
        let store = NotificationStore(configuration: database, logger: storeLogger)
        let rig = WorkerTestRig(
            logger: logger,
            mock: mock,
            outputMock: outputMock,
            server: postgres,
            database: database,
            producer: producer,
            store: store
        )
        let directory = try verifiers ?? WorkerPipelineTests.directory()
        let services = RunningServices()
        services.start("the producer") { try await producer.run() }
        if separateOutputProducer { services.start("the output producer") { try await outputProducer.run() } }
        services.start("the store") { try await store.run() }
        // A worker stops within two store operations (its batch in flight, the outbox's last publication) and its
        // consumer's wait for rebalances before leaving (a session timeout); a producer within its flush timeout.
        let stopLimit =
            database.operationTimeout * 2 + WorkerPipelineTests.workerConfiguration(mock).consumer.sessionTimeout
            + outputConfiguration.shutdownFlushTimeout
        var workers = 0
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
            workers += 1
            services.start("worker \(workers)") { try await worker.run() }
            return worker
        }
        do {
            try await body(rig, startWorker)
        } catch {
            await services.stop(within: stopLimit)
            throw error
        }
        await services.stop(within: stopLimit)
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

/// The services a rig runs beside its test, each in a task of its own: stopped by cancellation, and a service that
/// does not end within its limit fails the test by name instead of hanging the suite (it is left running).
private final class RunningServices: Sendable {
    private let tasks = Mutex<[(name: String, task: Task<Void, any Error>)]>([])

    func start(_ name: String, _ run: @escaping @Sendable () async throws -> Void) {
        tasks.withLock { $0.append((name, Task { try await run() })) }
    }

    /// Cancels every service and waits for them to end, each for at most `limit`.
    func stop(within limit: Duration, sourceLocation: SourceLocation = #_sourceLocation) async {
        let running = tasks.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        for service in running { service.task.cancel() }
        let hung = await withTaskGroup(of: String?.self) { group in
            for (name, task) in running {
                group.addTask { await finishes(within: limit, { _ = try? await task.value }) ? nil : name }
            }
            var hung: [String] = []
            for await name in group { if let name { hung.append(name) } }
            return hung.sorted()
        }
        if !hung.isEmpty {
            Issue.record(
                "\(hung.joined(separator: ", ")) did not stop within \(limit) of being cancelled",
                sourceLocation: sourceLocation
            )
        }
    }
}
