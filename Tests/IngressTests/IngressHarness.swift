import AsyncHTTPClient
import Foundation
import Ingress
import KafkaClient
import Logging
import NIOCore
import NIOHTTP1
import PipelineContract
import Prometheus
import ServiceLifecycle

/// A real ingress on 127.0.0.1 (port 0) producing to a librdkafka mock cluster, with a real HTTP client.
struct IngressHarness: Sendable {
    static let rawTopic = "appstore.notifications.raw"
    static let partitions = 8
    static let app = PipelineApp(name: "notes", bundleID: "com.example.notes", appAppleID: 1_234_567_890)

    struct Reply: Sendable {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: String
        var requestID: String? { headers.first(name: "X-Request-ID") }
    }

    let mock: KafkaMockCluster
    let port: Int
    let client: HTTPClient
    let group: ServiceGroup
    let logger: Logger

    static func logger(_ label: String) -> Logger {
        var logger = Logger(label: "test.ingress.\(label)")
        logger.logLevel =
            ProcessInfo.processInfo.environment["ASNP_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        return logger
    }

    /// Runs `body` against a running ingress; shuts everything down afterwards.
    static func with<T: Sendable>(
        label: String = #function,
        configure: (inout IngressConfiguration) -> Void = { _ in },
        _ body: @Sendable (IngressHarness) async throws -> T
    ) async throws -> T {
        let logger = logger(label)
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        try mock.createTopic(rawTopic, partitions: partitions)
        var configuration = IngressConfiguration(apps: [app])
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.acknowledgementTimeout = .seconds(2)
        configure(&configuration)
        var producerConfiguration = KafkaProducerConfiguration(cluster: mock.clusterConfiguration)
        producerConfiguration.deliveryTimeout = configuration.acknowledgementTimeout
        producerConfiguration.shutdownFlushTimeout = .seconds(10)
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = try IngressServer(
            configuration: configuration,
            producer: producer,
            logger: logger,
            onListening: { port in portContinuation.yield(port) }
        )
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: producer), .init(service: server)], logger: logger)
        )
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask {
                defer { portContinuation.finish() }
                try await group.run()
                return nil
            }
            guard let port = await ports.first(where: { _ in true }) else {
                throw IngressHarnessError(reason: "the ingress did not start listening")
            }
            var clientConfiguration = HTTPClient.Configuration()
            clientConfiguration.timeout = .init(connect: .seconds(2), read: .seconds(20))
            clientConfiguration.connectionPool.retryConnectionEstablishment = false
            // Tests set the ingress's idle timeout as low as 1 s; a pooled connection reused just as the server
            // closes it is reset (a loaded run saw it), so the client lets idle connections go well before.
            clientConfiguration.connectionPool.idleTimeout = .milliseconds(200)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
            let harness = IngressHarness(mock: mock, port: port, client: client, group: group, logger: logger)
            let result: T
            do {
                result = try await body(harness)
            } catch {
                try? await client.shutdown()
                await group.triggerGracefulShutdown()
                throw error
            }
            try await client.shutdown()
            await group.triggerGracefulShutdown()
            while let value = try await tasks.next() {
                if let value { return value }
            }
            return result
        }
    }

    func post(_ path: String, body: String, headers: [(String, String)] = []) async throws -> Reply {
        try await send(.POST, path, bytes: Array(body.utf8), headers: headers)
    }

    func post(_ path: String, bytes: [UInt8], headers: [(String, String)] = []) async throws -> Reply {
        try await send(.POST, path, bytes: bytes, headers: headers)
    }

    func send(_ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> Reply {
        try await send(method, path, bytes: body.map { Array($0.utf8) }, headers: [])
    }

    func send(_ method: HTTPMethod, _ path: String, bytes: [UInt8]?, headers: [(String, String)]) async throws -> Reply
    {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let bytes {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: bytes))
        }
        let response = try await client.execute(request, timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: response.status, headers: response.headers, body: String(buffer: body))
    }

    /// Reads the raw topic from the start until `count` messages arrived or `timeout` passed.
    func consume(count: Int, timeout: Duration = .seconds(30)) async throws -> [KafkaMessage] {
        try await consume(until: { $0.count >= count }, timeout: timeout)
    }

    /// Reads the raw topic from the start until what arrived satisfies `done` or `timeout` passed.
    func consume(
        until done: ([KafkaMessage]) -> Bool,
        timeout: Duration = .seconds(30)
    ) async throws -> [KafkaMessage] {
        var configuration = KafkaConsumerConfiguration(
            cluster: mock.clusterConfiguration,
            groupID: "reader-\(UUID().uuidString)",
            topics: [Self.rawTopic]
        )
        configuration.pollMaxWait = .milliseconds(50)
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var messages: [KafkaMessage] = []
        do {
            while !done(messages), ContinuousClock.now < deadline {
                for event in try await consumer.poll(maxMessages: 500, maxWait: .milliseconds(50)) {
                    if case .messages(let batch) = event { messages += batch }
                }
            }
            // A little longer, to see messages that should not be there.
            let settle = ContinuousClock.now.advanced(by: .milliseconds(300))
            while ContinuousClock.now < settle {
                for event in try await consumer.poll(maxMessages: 500, maxWait: .milliseconds(50)) {
                    if case .messages(let batch) = event { messages += batch }
                }
            }
        } catch {
            try? await consumer.close()
            throw error
        }
        try await consumer.close()
        return messages
    }
}

struct IngressHarnessError: Error {
    var reason: String
}

extension KafkaMessage {
    var headerFields: [String: String] {
        Dictionary(
            headers.compactMap { header in header.stringValue.map { (header.key, $0) } },
            uniquingKeysWith: { a, _ in a }
        )
    }
}
