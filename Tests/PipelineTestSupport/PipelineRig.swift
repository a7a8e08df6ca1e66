import AppStoreTestSupport
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing

/// What a test of the pipeline's parts runs against in its own process: librdkafka's mock cluster with the raw topic
/// (and the output topics when asked), a migrated database of its own, and a producer to the raw topic and a store
/// running while the test does. The worker's and the reconciler's rigs are built on it.
package struct PipelineRig: Sendable {
    package static let rawTopic = PipelineTopics.raw

    package let logger: Logger
    package let mock: KafkaMockCluster
    package let server: TestPostgresServer
    /// The database's settings, after the test's `configure`.
    package let database: NotificationStoreConfiguration
    package let producer: KafkaProducer
    package let store: NotificationStore
    /// Where the test starts services of its own (a worker, an output producer): stopped with the rig's.
    package let services: RunningServices

    /// Runs `body` with a rig; every service is cancelled afterwards and must stop within `stopLimit` plus what the
    /// rig's own need (two store operations, the producer's flush), or the test fails naming it.
    ///
    /// - Parameters:
    ///   - label: the loggers' label (``Logger/test(_:)``).
    ///   - rawPartitions: the raw topic's partitions.
    ///   - outputPartitions: when given, the output topics are created with this many partitions.
    ///   - server: a dedicated server for a test that stops it; the process's shared one otherwise.
    ///   - configure: changes the store settings after migrating (which uses the default timeouts).
    ///   - stopLimit: the longest the test's own services may take to stop, beyond the rig's.
    package static func run(
        label: String,
        rawPartitions: Int,
        outputPartitions: Int? = nil,
        server: TestPostgresServer? = nil,
        configure: (inout NotificationStoreConfiguration) -> Void = { _ in },
        stopLimit: Duration = .zero,
        _ body: (PipelineRig) async throws -> Void
    ) async throws {
        let logger = Logger.test(label)
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        try mock.createTopic(rawTopic, partitions: rawPartitions)
        if let outputPartitions { try createOutputTopics(on: mock, partitions: outputPartitions) }
        let postgres: TestPostgresServer
        if let server { postgres = server } else { postgres = try await TestPostgresServer.shared() }
        var database = try await postgres.makeDatabase()
        try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
            _ = try await store.migrate()
        }
        configure(&database)
        let producerConfiguration = KafkaProducerConfiguration(cluster: mock.clusterConfiguration)
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        // A store whose pool does not close in time says which connections it still has: worth seeing in a run.
        var storeLogger = logger
        storeLogger.logLevel = min(logger.logLevel, .error)
        let store = NotificationStore(configuration: database, logger: storeLogger)
        let services = RunningServices()
        services.start("the producer") { try await producer.run() }
        services.start("the store") { try await store.run() }
        let rig = PipelineRig(
            logger: logger,
            mock: mock,
            server: postgres,
            database: database,
            producer: producer,
            store: store,
            services: services
        )
        let limit = database.operationTimeout * 2 + producerConfiguration.shutdownFlushTimeout + stopLimit
        do {
            try await body(rig)
        } catch {
            await services.stop(within: limit)
            throw error
        }
        await services.stop(within: limit)
    }

    /// Creates the output topics (decoded, subscription state, dead letter) on `mock`.
    package static func createOutputTopics(on mock: KafkaMockCluster, partitions: Int) throws {
        let outputs = OutputTopics()
        for topic in [outputs.decoded, outputs.subscriptionState, outputs.deadLetter] {
            try mock.createTopic(topic, partitions: partitions)
        }
    }

    /// Every message the raw topic holds, partition by partition.
    package func rawMessages() async throws -> [KafkaMessage] {
        try await Self.messages(of: Self.rawTopic, on: mock, logger: logger)
    }

    /// Every message `topic` holds on `mock`, partition by partition.
    package static func messages(
        of topic: String,
        on mock: KafkaMockCluster,
        logger: Logger
    ) async throws -> [KafkaMessage] {
        let admin = try KafkaAdminClient(cluster: mock.clusterConfiguration, logger: logger)
        let reader = try KafkaPartitionReader(cluster: mock.clusterConfiguration, logger: logger)
        var messages: [KafkaMessage] = []
        for (partition, marks) in try await admin.watermarks(of: topic) where marks.high > marks.low {
            try await reader.read(partition, offsets: marks.low..<marks.high) { messages += $0 }
        }
        return messages
    }
}
