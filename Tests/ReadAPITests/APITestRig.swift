import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import AsyncHTTPClient
import ChildProcesses
import Foundation
import KafkaClient
import LocalPostgres
import Logging
import NIOCore
import NIOHTTP1
import NotificationStore
import PipelineContract
import PipelineStatus
import PipelineTracing
import PostgresRuntime
import ReadAPI
import ServiceLifecycle
import StoreTestSupport
import Synchronization
import Testing
import VerificationTestSupport

/// The read API on loopback over a throwaway database that the store's writer fills with notifications signed by a
/// test PKI, as the workers would: what the API answers, it reads from rows made the real way. Every exchange is
/// kept, and ``validateExchanges()`` checks them against Docs/contract/openapi.yaml with an independent validator.
final class APITestRig: Sendable {
    static let bundleId = "com.example.notes"
    static let otherBundleId = "com.example.other"
    static let day: Int64 = 86_400_000

    /// One key of the keys file, with the key itself.
    struct Key: Sendable {
        var id: String
        var key: String
        var scopes: [(bundleId: String, environments: [String])]
        var requestsPerSecond: Double?
        var burst: Double?

        init(
            id: String,
            scopes: [(bundleId: String, environments: [String])],
            requestsPerSecond: Double? = nil,
            burst: Double? = nil
        ) {
            self.id = id
            self.key = APIKeyring.generateKey().key
            self.scopes = scopes
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
        }

        /// Its entry in the keys file.
        var entry: APIKeysFile.Entry {
            APIKeysFile.Entry(
                id: id,
                sha256: APIKeyring.hex(APIKeyring.digest(of: key)),
                scopes: scopes.map { .init(bundleId: $0.bundleId, environments: $0.environments) },
                requestsPerSecond: requestsPerSecond,
                burst: burst
            )
        }
    }

    /// One request and its answer, as the validator reads them.
    struct Exchange: Sendable {
        var path: String
        var query: String
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
    }

    let store: NotificationStore
    let server: TestPostgresServer
    let database: String
    let keysFile: String
    let port: Int
    let statusPort: Int
    let api: ReadAPIServer
    private let signer: NotificationSigner
    private let verifiers: [String: NotificationVerifier]
    private let client: HTTPClient
    private let exchanges = Mutex<[Exchange]>([])
    private let offsets = Mutex<Int64>(0)
    /// What access is judged against: the system's clock unless a test moves it.
    let now = Mutex<Date?>(nil)

    private init(
        store: NotificationStore,
        server: TestPostgresServer,
        database: String,
        keysFile: String,
        port: Int,
        statusPort: Int,
        api: ReadAPIServer,
        signer: NotificationSigner,
        verifiers: [String: NotificationVerifier],
        client: HTTPClient
    ) {
        self.store = store
        self.server = server
        self.database = database
        self.keysFile = keysFile
        self.port = port
        self.statusPort = statusPort
        self.api = api
        self.signer = signer
        self.verifiers = verifiers
        self.client = client
    }

    /// Runs `body` with the API serving `keys` over a fresh database (migrated unless `migrate` is false), reading
    /// as the role `readAs` if given; every exchange is validated against the contract at the end.
    static func run(
        keys: [Key],
        migrate: Bool = true,
        readAs role: String? = nil,
        tracing: TracingBackend = .off,
        configure: (inout ReadAPIConfiguration) -> Void = { _ in },
        _ body: (APITestRig) async throws -> Void
    ) async throws {
        var logger = Logger(label: "asnp.api.test")
        logger.logLevel =
            ProcessInfo.processInfo.environment["ASNP_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        let server = try await TestPostgresServer.shared()
        let storeConfiguration = try await server.makeDatabase()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keysFile = directory.appendingPathComponent("keys.json").path
        try write(keys, to: keysFile)
        var configuration = ReadAPIConfiguration(keysFile: keysFile)
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configure(&configuration)
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        var verifiers: [String: NotificationVerifier] = [:]
        for bundleId in [bundleId, otherBundleId] {
            verifiers[bundleId] = try TestVerifiers.make(roots: [pki.root], bundleId: bundleId)
        }
        let metrics = ReadAPIMetrics()
        let keyring = try APIKeyringFile(path: keysFile, reloadEvery: .seconds(3600), metrics: metrics, logger: logger)
        var readConfiguration = storeConfiguration
        readConfiguration.applicationName = "asnp-api-test"
        if let role { readConfiguration.username = role }
        let reader = StateReader(configuration: readConfiguration.runtimeConfiguration, logger: logger)
        let ports = Ports()
        let rigHolder = Mutex<APITestRig?>(nil)
        try await NotificationStore.withRunning(configuration: storeConfiguration, logger: logger) { store in
            if migrate { try await store.migrate() }
            let api = ReadAPIServer(
                configuration: configuration,
                reader: reader,
                keys: keyring,
                metrics: metrics,
                clock: { rigHolder.withLock { $0?.now.withLock { $0 } } ?? Date() },
                tracer: tracing.tracer,
                logger: logger,
                onListening: { port in ports.api.withLock { $0 = port } }
            )
            let status = api.statusServer(
                configuration: .init(host: "127.0.0.1", port: 0),
                onListening: { port in ports.status.withLock { $0 = port } }
            )
            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: (tracing.service.map { [.init(service: $0)] } ?? []) + [
                        .init(service: reader), .init(service: keyring), .init(service: status), .init(service: api),
                    ],
                    logger: logger
                )
            )
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                defer { tasks.cancelAll() }
                let listening = await eventually {
                    ports.api.withLock { $0 } != nil && ports.status.withLock { $0 } != nil
                }
                try #require(listening, "the API listens")
                let rig = APITestRig(
                    store: store,
                    server: server,
                    database: storeConfiguration.database,
                    keysFile: keysFile,
                    port: ports.api.withLock { $0! },
                    statusPort: ports.status.withLock { $0! },
                    api: api,
                    signer: signer,
                    verifiers: verifiers,
                    client: client
                )
                rigHolder.withLock { $0 = rig }
                do {
                    // The API answers 503 until its first look at the schema; on a loaded machine that takes a while.
                    if migrate, role == nil {
                        let ready = await eventually { (try? await rig.status("/health/ready").status) == 200 }
                        try #require(ready, "the API is ready over a migrated database")
                    }
                    try await body(rig)
                    try await rig.validateExchanges()
                } catch {
                    try? await client.shutdown()
                    await group.triggerGracefulShutdown()
                    throw error
                }
                try await client.shutdown()
                await group.triggerGracefulShutdown()
                try await tasks.next()
            }
        }
    }

    private final class Ports: Sendable {
        let api = Mutex<Int?>(nil)
        let status = Mutex<Int?>(nil)
    }

    /// Writes `keys` as the keys file at `path`.
    static func write(_ keys: [Key], to path: String) throws {
        try JSONEncoder().encode(APIKeysFile(keys: keys.map(\.entry))).write(to: URL(fileURLWithPath: path))
    }

    /// Signs `events`, verifies them as the workers would, and stores them in one batch.
    func store(_ events: [SubscriptionEvent]) async throws {
        var batch = NotificationBatch()
        for event in events {
            let body = try signer.body(for: event)
            let verifier = try #require(verifiers[event.bundleId])
            guard case .verified(let notification) = await verifier.verify(body: Array(body.utf8)) else {
                Issue.record("a signed test notification was rejected")
                return
            }
            let offset = offsets.withLock { offset in
                defer { offset += 1 }
                return offset
            }
            let raw = RawNotification(
                body: Array(body.utf8),
                key: event.originalTransactionId,
                headers: ["version": "2", "environment": "sandbox"],
                receivedAt: Date(),
                source: KafkaTopicPartitionOffset(topic: PipelineTopics.raw, partition: 0, offset: offset)
            )
            batch.entries.append(NotificationBatch.Entry(raw: raw, verdict: .verified(notification)))
        }
        _ = try await store.write(batch)
    }

    /// A subscription event of `key` in the sandbox of ``bundleId`` unless `configure` says otherwise.
    static func event(
        _ type: NotificationType,
        _ subtype: NotificationSubtype? = nil,
        key: String,
        transaction: String,
        at signedDate: Int64,
        expires: Int64,
        configure: (inout SubscriptionEvent) -> Void = { _ in }
    ) -> SubscriptionEvent {
        var event = SubscriptionEvent(
            notificationType: type,
            subtype: subtype,
            notificationUUID: UUID().uuidString.lowercased(),
            signedDate: signedDate,
            bundleId: bundleId,
            originalTransactionId: key,
            transactionId: transaction,
            productId: "com.example.notes.pro.monthly",
            purchaseDate: signedDate,
            expiresDate: expires
        )
        configure(&event)
        return event
    }

    /// Subscription `key` bought at `at` (its first transaction has the same id), expiring at `expires` (30 days on).
    static func subscribed(_ key: String, at: Int64 = nowMilliseconds, expires: Int64? = nil) -> SubscriptionEvent {
        event(.subscribed, .initialBuy, key: key, transaction: key, at: at, expires: expires ?? at + 30 * day)
    }

    /// Milliseconds since 1970, now.
    static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// GETs `path` (with its query) with `key` as the bearer key, or `authorization` as the header itself.
    @discardableResult
    func get(
        _ pathAndQuery: String,
        key: Key?,
        authorization: String? = nil,
        headers extra: [(String, String)] = []
    ) async throws -> Exchange {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(pathAndQuery)")
        if let key { request.headers.add(name: "Authorization", value: "Bearer \(key.key)") }
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 << 20)
        let parts = pathAndQuery.split(separator: "?", maxSplits: 1)
        let exchange = Exchange(
            path: String(parts[0]),
            query: parts.count > 1 ? String(parts[1]) : "",
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name, $0.value) },
            body: Array(buffer: body)
        )
        exchanges.withLock { $0.append(exchange) }
        return exchange
    }

    /// The status port's answer to `path`.
    func status(_ path: String) async throws -> (status: Int, body: String) {
        let response = try await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(statusPort)\(path)"),
            timeout: .seconds(60)
        )
        let body = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    /// Validates every exchange so far against Docs/contract/openapi.yaml with Tests/ContractValidation/validate_api.py
    /// (openapi-spec-validator and jsonschema: not this package's code).
    func validateExchanges() async throws {
        let lines = try exchanges.withLock { exchanges in
            try exchanges.map { exchange in
                var object: [String: Any] = [
                    "method": "GET", "path": exchange.path, "query": exchange.query, "status": exchange.status,
                    "headers": Dictionary(exchange.headers.map { ($0.0.lowercased(), $0.1) }) { first, _ in first },
                ]
                object["body"] = exchange.body.isEmpty ? NSNull() : String(decoding: exchange.body, as: UTF8.self)
                return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            }
        }
        guard !lines.isEmpty else { return }
        let (status, report) = try await Self.validator(["responses"], input: lines.joined(separator: "\n") + "\n")
        #expect(status == 0, "every answer is valid against openapi.yaml:\n\(report)")
    }

    /// Runs Tests/ContractValidation/validate_api.py with `arguments` after `--contract Docs/contract`, `input` on
    /// its standard input; its exit status and output.
    static func validator(_ arguments: [String], input: String = "") async throws -> (Int32, String) {
        try await LocalPostgresServer.offPool { try runValidator(arguments, input: input) }
    }

    /// A ``ChildProcess`` rather than Foundation's Process, whose exit monitoring was seen to miss exits
    /// (LocalPostgresServer's note); output through a file.
    private static func runValidator(_ arguments: [String], input text: String) throws -> (Int32, String) {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-api-\(UUID()).out").path
        let errorPath = outputPath + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        let child = try ChildProcess(
            executable: try #require(ChildProcess.path(of: "python3")),
            arguments: [
                repository.appendingPathComponent("Tests/ContractValidation/validate_api.py").path,
                "--contract", repository.appendingPathComponent("Docs/contract").path,
            ] + arguments,
            standardInput: .data(Data(text.utf8)),
            standardOutput: .file(outputPath),
            standardError: .file(errorPath)
        )
        let status = child.waitForExit()
        let output = [outputPath, errorPath].map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }
        return (status, output.joined())
    }
}
