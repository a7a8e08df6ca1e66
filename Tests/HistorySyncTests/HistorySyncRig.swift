import AppStoreModels
import AppStoreSigning
import Foundation
import HistorySync
import HistoryTestSupport
import KafkaClient
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import StoreTestSupport

/// What a history sync test runs against: the fake Apple endpoint, a mock cluster with the raw topic, a migrated
/// database for the checkpoints, and a producer and store running while the test does.
struct HistorySyncRig {
    static let rawTopic = PipelineTopics.raw
    static let bundleID = "com.example.notes"
    /// Twenty whole days ending yesterday: within the 30 days Apple keeps sandbox history.
    static let window = FakeAppStoreServer.twentyDaysToYesterday

    let apple: FakeAppStoreServer
    let baseURL: String
    let mock: KafkaMockCluster
    let producer: KafkaProducer
    let store: NotificationStore
    let logger: Logger

    /// A rig whose fake Apple serves `history` sent evenly over ``window``.
    static func run(history: [String], _ body: (HistorySyncRig) async throws -> Void) async throws {
        try await run(apple: FakeAppStoreServer(bundleID: bundleID, history: history), body)
    }

    static func run(apple: FakeAppStoreServer, _ body: (HistorySyncRig) async throws -> Void) async throws {
        var logger = Logger(label: "test.history")
        logger.logLevel =
            ProcessInfo.processInfo.environment["ASNP_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        try mock.createTopic(rawTopic, partitions: 8)
        let database = try await TestPostgresServer.shared().makeDatabase()
        try await NotificationStore.withRunning(configuration: database, logger: logger) { _ = try await $0.migrate() }
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(cluster: mock.clusterConfiguration),
            logger: logger
        )
        let store = NotificationStore(configuration: database, logger: logger)
        try await apple.serve { baseURL in
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await producer.run() }
                tasks.addTask { try await store.run() }
                try await body(
                    HistorySyncRig(
                        apple: apple,
                        baseURL: baseURL,
                        mock: mock,
                        producer: producer,
                        store: store,
                        logger: logger
                    )
                )
                tasks.cancelAll()
            }
        }
    }

    /// A sync against the fake endpoint; retries wait milliseconds instead of seconds. One range may span the whole
    /// ``window`` (the default `rangeLimit`), so that its pages follow one another as in a single request sequence.
    func sync(
        environment: AppStoreEnvironment = .sandbox,
        privateKeyPEM: String? = nil,
        maximumAttempts: Int = 8,
        requestsPerSecond: Double = 1_000,
        rangeLimit: Duration = .seconds(30 * 86_400),
        settleTime: Duration = HistorySync.Configuration().settleTime,
        clock: (any HistoryClock)? = nil
    ) throws -> HistorySync {
        var configuration = try AppStoreServerAPIConfiguration(
            keyID: apple.keyID,
            issuerID: apple.issuerID,
            bundleID: Self.bundleID,
            privateKeyPEM: privateKeyPEM ?? apple.privateKeyPEM
        )
        configuration.sandboxBaseURL = baseURL + "/sandbox"
        configuration.productionBaseURL = baseURL + "/production"
        var retry = AppStoreServerAPIClient.RetryPolicy()
        retry.initialBackoff = .milliseconds(20)
        retry.maximumBackoff = .milliseconds(200)
        retry.maximumAttempts = maximumAttempts
        let client = AppStoreServerAPIClient(
            configuration: configuration,
            rateLimiter: RequestRateLimiter(requestsPerSecond: requestsPerSecond),
            retryPolicy: retry,
            logger: logger
        )
        var syncConfiguration = HistorySync.Configuration()
        syncConfiguration.rangeLimit = rangeLimit
        syncConfiguration.settleTime = settleTime
        if let clock { syncConfiguration.clock = clock }
        return HistorySync(
            client: client,
            environment: environment,
            producer: producer,
            store: store,
            appName: "notes",
            rawTopic: Self.rawTopic,
            configuration: syncConfiguration,
            logger: logger
        )
    }

    /// The ledger of the unfiltered history in `environment`.
    func ledger(_ environment: AppStoreEnvironment = .sandbox) async throws -> HistoryLedger {
        try await store.historyLedger(
            for: HistoryLedger.Key(bundleID: Self.bundleID, environment: environment.rawValue)
        )
    }

    /// Every message on the raw topic.
    func rawMessages() async throws -> [KafkaMessage] {
        let admin = try KafkaAdminClient(cluster: mock.clusterConfiguration, logger: logger)
        let reader = try KafkaPartitionReader(cluster: mock.clusterConfiguration, logger: logger)
        var messages: [KafkaMessage] = []
        for (partition, marks) in try await admin.watermarks(of: Self.rawTopic) where marks.high > marks.low {
            try await reader.read(partition, offsets: marks.low..<marks.high) { messages += $0 }
        }
        return messages
    }

    /// `count` signed notifications (their `signedPayload`s) of realistic subscriptions, signed by a test PKI.
    static func signedHistory(count: Int) throws -> [String] {
        let signer = NotificationSigner(signer: try JWSSigner(pki: try TestPKI()))
        return try SubscriptionEvent.samples(count: count, bundleId: bundleID).map {
            try signer.signer.sign(try signer.payload(for: $0))
        }
    }
}

extension KafkaMessage {
    /// The headers as a dictionary (values as text).
    var headerFields: [String: String] {
        Dictionary(headers.map { ($0.key, $0.value.map { String(buffer: $0) } ?? "") }) { $1 }
    }

    /// The `signedPayload` of a V2 body.
    var signedPayload: String? {
        (try? JSONSerialization.jsonObject(with: Data(value.readableBytesView)) as? [String: Any])?["signedPayload"]
            as? String
    }
}
