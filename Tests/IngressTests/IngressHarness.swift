import AppStoreTestSupport
import AsyncHTTPClient
import Foundation
import Ingress
import KafkaClient
import Logging
import NIOCore
import NIOHTTP1
import PipelineContract
import PipelineStatus
import Prometheus
import ServiceLifecycle

/// A real ingress on 127.0.0.1 (port 0, its status server on another) producing to a librdkafka mock cluster, with a
/// real HTTP client.
struct IngressHarness: Sendable {
    static let rawTopic = PipelineTopics.raw
    static let partitions = 8
    static let app = PipelineApp(
        name: "notes",
        bundleID: "com.example.notes",
        appAppleID: 1_234_567_890,
        sharedSecrets: ["v1-secret"]
    )
    /// The acknowledgement timeout of the tests that do not test it: twice the production default (5 s). A full test
    /// run on 2 cores keeps dozens of mock clusters, producers and servers busy at once, and has delayed answers by
    /// seconds. Tests of the timeout itself set their own, shorter one.
    static let acknowledgementTimeout: Duration = .seconds(10)
    /// How long ``with(label:configure:_:)`` waits for the producer to be ready before it gives up.
    static let readinessLimit: Duration = .seconds(60)
    /// The HTTP client's connect timeout (also its wait for a pooled connection) and read timeout.
    static let connectLimit: TimeAmount = .seconds(20)
    static let readLimit: TimeAmount = .seconds(60)
    /// A header only the harness's warm-up messages carry; ``consume(until:timeout:)`` leaves them out.
    static let warmUpHeader = "asnp-test-warm-up"

    struct Reply: Sendable {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: String
        var requestID: String? { headers.first(name: "X-Request-ID") }
    }

    let mock: KafkaMockCluster
    let port: Int
    /// The status server's: the probes and `/metrics`.
    let statusPort: Int
    let client: HTTPClient
    let group: ServiceGroup
    let logger: Logger

    static func logger(_ label: String) -> Logger {
        Logger.test("test.ingress.\(label)")
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
        configuration.acknowledgementTimeout = Self.acknowledgementTimeout
        configure(&configuration)
        var producerConfiguration = configuration.producerConfiguration(cluster: mock.clusterConfiguration)
        producerConfiguration.shutdownFlushTimeout = .seconds(10)
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let (statusPorts, statusPortContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = try IngressServer(
            configuration: configuration,
            producer: producer,
            logger: logger,
            onListening: { port in portContinuation.yield(port) }
        )
        let status = server.statusServer(
            configuration: StatusServerConfiguration(host: "127.0.0.1", port: 0),
            logger: logger,
            onListening: { port in statusPortContinuation.yield(port) }
        )
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: producer), .init(service: status), .init(service: server)],
                logger: logger
            )
        )
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask {
                defer {
                    portContinuation.finish()
                    statusPortContinuation.finish()
                }
                try await group.run()
                return nil
            }
            guard let port = await ports.first(where: { _ in true }),
                let statusPort = await statusPorts.first(where: { _ in true })
            else {
                throw IngressHarnessError(reason: "the ingress did not start listening")
            }
            var clientConfiguration = HTTPClient.Configuration()
            // The connect timeout is also how long a request may wait for a pooled connection: a loaded run kept
            // one waiting past 2 s while 8 (the default per-host limit) were busy. Tests hold up to 8 requests at
            // once on purpose, so the pool allows more, and the wait is a cap, not a promise.
            // The read timeout counts from the request's sending, and a connection waits for the server's accept
            // loop, which a loaded run has held up for 20 s: a cap for answers that never come.
            clientConfiguration.timeout = .init(connect: Self.connectLimit, read: Self.readLimit)
            clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
            clientConfiguration.connectionPool.retryConnectionEstablishment = false
            // Tests set the ingress's idle timeout as low as 1 s; a pooled connection reused just as the server
            // closes it is reset (a loaded run saw it), so the client lets idle connections go well before.
            clientConfiguration.connectionPool.idleTimeout = .milliseconds(200)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
            let harness = IngressHarness(
                mock: mock,
                port: port,
                statusPort: statusPort,
                client: client,
                group: group,
                logger: logger
            )
            let result: T
            do {
                try await Self.warmUp(producer)
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

    /// Returns once the producer has what a first send needs: the cluster's metadata, the raw topic's leaders and its
    /// idempotent producer id, shown by an acknowledged warm-up message on the raw topic. A fresh mock cluster and
    /// producer take a few round trips for them, which a loaded 2-core run has stretched past a 2 s acknowledgement
    /// timeout; a test's first request must not pay for them. A warm-up send that times out (the producer's delivery
    /// timeout is the test's acknowledgement timeout) is sent again: the producer keeps connecting meanwhile.
    static func warmUp(_ producer: KafkaProducer) async throws {
        let deadline = ContinuousClock.now.advanced(by: readinessLimit)
        while true {
            let message = KafkaProducerMessage(
                topic: rawTopic,
                value: ByteBuffer(string: "warm-up"),
                headers: [KafkaHeader(key: warmUpHeader, string: "1")]
            )
            do throws(KafkaError) {
                try await producer.send(message)
                return
            } catch {
                guard error.isRetriable, ContinuousClock.now < deadline else {
                    throw IngressHarnessError(reason: "the producer was not ready after \(readinessLimit): \(error)")
                }
            }
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

    /// `GET path` on the status port (the probes, `/metrics`).
    func status(_ path: String) async throws -> Reply {
        try await send(.GET, path, bytes: nil, headers: [], port: statusPort)
    }

    func send(
        _ method: HTTPMethod,
        _ path: String,
        bytes: [UInt8]?,
        headers: [(String, String)],
        port: Int? = nil
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port ?? self.port)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let bytes {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: bytes))
        }
        // The client's own timeouts bound each stage; this caps the whole at their sum.
        let response = try await client.execute(request, timeout: Self.connectLimit + Self.readLimit)
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: response.status, headers: response.headers, body: String(buffer: body))
    }

    /// Scrapes `/metrics` until the value of `name` (a metric without labels) satisfies `condition`, for at most
    /// `timeout`; whether it did.
    func waitForMetric(
        _ name: String,
        timeout: Duration = IngressHarness.readinessLimit,
        _ condition: (Double) -> Bool
    ) async throws -> Bool {
        try await eventually(timeout: timeout) {
            try await metrics([name])[name].map(condition) ?? false
        }
    }

    /// One scrape of `/metrics`: the values of `names` (metrics without labels) that it holds.
    func metrics(_ names: [String]) async throws -> [String: Double] {
        let lines = try await status("/metrics").body.split(separator: "\n")
        var values: [String: Double] = [:]
        for name in names {
            values[name] = lines.first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
        }
        return values
    }

    /// Reads the raw topic from the start until `count` messages arrived or `timeout` passed.
    func consume(count: Int, timeout: Duration = .seconds(30)) async throws -> [KafkaMessage] {
        try await consume(until: { $0.count >= count }, timeout: timeout)
    }

    /// Reads the raw topic from the start until what arrived satisfies `done` and everything the topic held when the
    /// read began has been read, or `timeout` passed; returns what arrived, without the harness's warm-up messages.
    /// Throws if the read did not get that far.
    ///
    /// Reading up to the end the topic had first (the warm-up message at least) shows the consumer joined its group
    /// and caught up, so "nothing" or "nothing more" is what the topic holds, not a consumer still joining (which
    /// takes the mock 3 s: a read of 500 ms used to see nothing whatever the topic held).
    func consume(
        until done: ([KafkaMessage]) -> Bool,
        timeout: Duration = .seconds(30)
    ) async throws -> [KafkaMessage] {
        let admin = try KafkaAdminClient(cluster: mock.clusterConfiguration, logger: logger)
        let ends = try await admin.watermarks(of: Self.rawTopic)
        var configuration = KafkaConsumerConfiguration(
            cluster: mock.clusterConfiguration,
            groupID: "reader-\(UUID().uuidString)",
            topics: [Self.rawTopic]
        )
        configuration.pollMaxWait = .milliseconds(50)
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var messages: [KafkaMessage] = []
        var read: [KafkaTopicPartition: Int64] = [:]
        func poll() async throws {
            for event in try await consumer.poll(maxMessages: 500, maxWait: .milliseconds(50)) {
                guard case .messages(let batch) = event else { continue }
                for message in batch {
                    read[message.topicPartition] = max(read[message.topicPartition] ?? 0, message.offset + 1)
                    if message.headers.first(named: Self.warmUpHeader) == nil { messages.append(message) }
                }
            }
        }
        func caughtUp() -> Bool {
            ends.allSatisfy { partition, marks in marks.high <= marks.low || (read[partition] ?? 0) >= marks.high }
        }
        do {
            while !(done(messages) && caughtUp()), ContinuousClock.now < deadline {
                try await poll()
            }
            guard caughtUp() else {
                throw IngressHarnessError(reason: "the reader did not reach the end of the raw topic in \(timeout)")
            }
            // A little longer, to see messages that should not be there.
            let settle = ContinuousClock.now.advanced(by: .milliseconds(300))
            while ContinuousClock.now < settle {
                try await poll()
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
