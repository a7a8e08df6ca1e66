import AppStoreTestSupport
import AsyncHTTPClient
import Foundation
import Ingress
import KafkaClient
import Logging
import NIOCore
import NIOHTTP1
import PipelineContract
import PipelineServices
import PipelineStatus
import ServiceLifecycle
import Testing

@Suite(
    "The ingress role built in-process as `asnp ingress` builds it: settings from the environment, receive, stop",
    .tags(.pipeline)
)
struct IngressRoleTests {
    /// The ingress's settings from `variables` and what every ingress needs, as `asnp ingress` reads them.
    static func role(_ variables: [String: String]) async throws -> IngressRoleSettings {
        let base = [
            "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092", "APPS_NAMES": "notes",
            "APPS_NOTES_BUNDLE_ID": Fixtures.bundleId,
        ]
        return try await PipelineSettings.load(file: nil, environment: base.merging(variables) { $1 }).ingressRole()
    }

    @Test(
        """
        the raw topic is written with zstd at level 1 unless ingress.compression and ingress.compressionLevel (0-12) \
        say otherwise, and an unknown codec is refused naming it; the producer's delivery timeout is the \
        acknowledgement timeout either way, its linger 5 ms; ingress.eventLoopThreads is unset (one per core) unless \
        given, and at least 1
        """
    )
    func rawTopicProducerAndEventLoops() async throws {
        let defaults = try await Self.role([:])
        #expect(defaults.producer.compression == "zstd" && defaults.producer.compressionLevel == 1)
        #expect(defaults.producer.deliveryTimeout == defaults.ingress.acknowledgementTimeout)
        #expect(defaults.producer.linger == .milliseconds(5))
        #expect(defaults.ingress.eventLoopThreads == nil)
        #expect(try await Self.role(["INGRESS_EVENT_LOOP_THREADS": "1"]).ingress.eventLoopThreads == 1)
        let none = await #expect(throws: SettingsError.self) {
            try await Self.role(["INGRESS_EVENT_LOOP_THREADS": "0"])
        }
        #expect("\(none.map { "\($0)" } ?? "")".contains("eventLoopThreads must be at least 1"))

        let lz4 = try await Self.role(["INGRESS_COMPRESSION": "lz4", "INGRESS_ACK_TIMEOUT_SECONDS": "2"])
        #expect(lz4.producer.compression == "lz4")
        #expect(lz4.producer.deliveryTimeout == .seconds(2))

        let error = await #expect(throws: SettingsError.self) { try await Self.role(["INGRESS_COMPRESSION": "brotli"]) }
        let message = error.map { "\($0)" } ?? ""
        let says = "ingress.compression (environment INGRESS_COMPRESSION) is 'brotli', not one of none, gzip"
        #expect(message.contains(says), "\(message)")

        let level = try await Self.role(["INGRESS_COMPRESSION": "gzip", "INGRESS_COMPRESSION_LEVEL": "6"])
        #expect(level.producer.compression == "gzip" && level.producer.compressionLevel == 6)
        let tooHigh = await #expect(throws: SettingsError.self) {
            try await Self.role(["INGRESS_COMPRESSION_LEVEL": "13"])
        }
        #expect(
            "\(tooHigh.map { "\($0)" } ?? "")".contains(
                "ingress.compressionLevel (environment INGRESS_COMPRESSION_LEVEL) is 13, not 0-12"
            )
        )
    }

    @Test(
        """
        the probes and /metrics are on ingress.statusHost:statusPort (default 0.0.0.0:9090), apart from the public \
        ingress.port (8080); the one port for both is refused, naming the setting
        """
    )
    func statusPortSettings() async throws {
        let defaults = try await Self.role([:])
        #expect(defaults.ingress.port == 8080)
        #expect(defaults.status == StatusServerConfiguration(host: "0.0.0.0", port: 9090))
        let moved = try await Self.role(["INGRESS_STATUS_HOST": "127.0.0.1", "INGRESS_STATUS_PORT": "9191"])
        #expect(moved.status == StatusServerConfiguration(host: "127.0.0.1", port: 9191))
        let error = await #expect(throws: SettingsError.self) { try await Self.role(["INGRESS_STATUS_PORT": "8080"]) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("ingress.statusPort"))
    }

    @Test(
        """
        Bodies answered 200 are on the raw topic with their key and headers; a graceful shutdown ends the run (on an \
        event loop of the ingress's own, which it shuts down)
        """
    )
    func receiveAndStop() async throws {
        let logger = Logger.test("test.ingress-role")
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        try mock.createTopic(PipelineTopics.raw, partitions: 2)
        let variables = [
            "KAFKA_BOOTSTRAP_SERVERS": mock.clusterConfiguration.bootstrapServers.joined(separator: ","),
            "APPS_NAMES": "notes",
            "APPS_NOTES_BUNDLE_ID": Fixtures.bundleId,
            "INGRESS_HOST": "127.0.0.1",
            "INGRESS_PORT": "0",
            "INGRESS_STATUS_HOST": "127.0.0.1",
            "INGRESS_STATUS_PORT": "0",
            "INGRESS_EVENT_LOOP_THREADS": "1",
        ]
        let settings = try await PipelineSettings.load(file: nil, environment: variables).ingressRole()
        let (ports, listening) = AsyncStream<Int>.makeStream()
        let (statusPorts, statusListening) = AsyncStream<Int>.makeStream()
        let role = try buildIngress(settings, logger: logger, onStatusListening: { statusListening.yield($0) }) {
            port in listening.yield(port)
        }
        let group = role.serviceGroup(logger: logger, gracefulShutdownSignals: [])
        let running = Task { try await group.run() }
        defer { running.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        var statusIterator = statusPorts.makeAsyncIterator()
        let statusPort = try #require(await statusIterator.next())
        // The public port has no /metrics; the status port has, with the ingress's own metrics.
        func get(_ port: Int, _ path: String) async throws -> (HTTPResponseStatus, String) {
            let reply = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"),
                timeout: .seconds(30)
            )
            return (reply.status, String(buffer: try await reply.body.collect(upTo: 1 << 20)))
        }
        #expect(try await get(port, "/metrics").0 == .notFound)
        let metrics = try await get(statusPort, "/metrics")
        #expect(metrics.0 == .ok)
        #expect(metrics.1.contains("asnp_ingress_requests_total"), "\(metrics.1)")

        // As Apple does: a 503 (the broker not acknowledging in time, as a fresh mock cluster may not under load) is
        // sent again; the contract under test is that a 200 means stored.
        let bodies = Fixtures.v2Cases.filter { $0.expectedStatus == "OK" }.prefix(5).map(\.body)
        var stored: [String: String] = [:]  // request id -> body
        for body in bodies {
            while true {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v2/notifications/sandbox")
                request.method = .POST
                request.body = .bytes(ByteBuffer(string: body))
                let reply = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                _ = try await reply.body.collect(upTo: 1 << 16)
                if reply.status == .ok {
                    stored[try #require(reply.headers.first(name: "X-Request-ID"))] = body
                    break
                }
                #expect(reply.status == .serviceUnavailable)
                try await Task.sleep(for: .milliseconds(200))
            }
        }

        await group.triggerGracefulShutdown()
        try await running.value

        var consumerConfiguration = KafkaConsumerConfiguration(
            cluster: mock.clusterConfiguration,
            groupID: "check",
            topics: [PipelineTopics.raw]
        )
        consumerConfiguration.pollMaxWait = .milliseconds(50)
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        var found: [String: KafkaMessage] = [:]
        // Stored messages are there at once; the bound only turns a loss into a failure instead of a hang.
        _ = try await eventually(timeout: .seconds(120)) {
            for event in try await consumer.poll(maxMessages: 100, maxWait: .milliseconds(100)) {
                guard case .messages(let messages) = event else { continue }
                for message in messages {
                    if let id = message.headers.first(named: RawNotificationHeaders.Name.requestID) {
                        found[id] = message
                    }
                }
            }
            return found.count >= stored.count
        }
        try await consumer.close()
        for (id, body) in stored {
            let message = try #require(found[id])
            #expect(String(buffer: message.value) == body)
            let key = PartitionKey.peek(body: Data(body.utf8), version: 2)?.value
            #expect(message.key.map { String(buffer: $0) } == key)
            #expect(message.headers.first(named: RawNotificationHeaders.Name.app) == "notes")
            #expect(message.headers.first(named: RawNotificationHeaders.Name.environment) == "Sandbox")
            #expect(message.headers.first(named: RawNotificationHeaders.Name.source) == "ingress")
        }
    }
}
