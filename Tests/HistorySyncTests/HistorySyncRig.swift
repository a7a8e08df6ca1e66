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
import PipelineTestSupport
import StoreTestSupport
import Tracing

/// What a history sync test runs against: the fake Apple endpoint, a mock cluster with the raw topic, a migrated
/// database for the checkpoints, and a producer and store running while the test does.
struct HistorySyncRig {
    static let rawTopic = PipelineRig.rawTopic
    static let bundleID = "com.example.notes"
    /// Twenty whole days ending yesterday: within the 30 days Apple keeps sandbox history.
    static let window = FakeAppStoreServer.twentyDaysToYesterday

    let apple: FakeAppStoreServer
    let baseURL: String
    /// The mock with the raw topic, the database, the producer and the store.
    let base: PipelineRig
    var mock: KafkaMockCluster { base.mock }
    var producer: KafkaProducer { base.producer }
    var store: NotificationStore { base.store }
    var logger: Logger { base.logger }

    /// A rig whose fake Apple serves `history` sent evenly over ``window``.
    static func run(history: [String], _ body: (HistorySyncRig) async throws -> Void) async throws {
        try await run(apple: FakeAppStoreServer(bundleID: bundleID, history: history), body)
    }

    static func run(apple: FakeAppStoreServer, _ body: (HistorySyncRig) async throws -> Void) async throws {
        try await PipelineRig.run(label: "test.history", rawPartitions: 8) { base in
            try await apple.serve { baseURL in
                try await body(HistorySyncRig(apple: apple, baseURL: baseURL, base: base))
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
        clock: (any HistoryClock)? = nil,
        tracer: (any Tracer)? = nil
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
            tracer: tracer,
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
        try await base.rawMessages()
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
