import AppStoreTestSupport
import AsyncHTTPClient
import Foundation
import KafkaClient
import Logging
import NIOCore
import NIOHTTP1
import PipelineContract
import PipelineServices
import PipelineTestSupport
import PipelineTracing
import PostgresRuntime
import Prometheus
import ServiceLifecycle
import StoreTestSupport
import Testing
import Tracing
import Worker

@Suite(
    "Traces exported over OTLP/HTTP: a request continues its sender's trace, the raw topic carries it to the worker",
    .tags(.pipeline)
)
struct PipelineTracingTests {
    static let base = [
        "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092", "APPS_NAMES": "notes", "APPS_NOTES_BUNDLE_ID": Fixtures.bundleId,
    ]

    static func tracing(_ variables: [String: String]) async throws -> TracingConfiguration {
        try await PipelineSettings.load(file: nil, environment: base.merging(variables) { $1 }).ingressRole().tracing
    }

    /// The settings that turn tracing on, every span sampled, exported to `endpoint` as OTLP/HTTP JSON.
    static func tracingOn(_ endpoint: String) -> [String: String] {
        [
            "TRACING_ENABLED": "true", "TRACING_ENDPOINT": endpoint, "TRACING_PROTOCOL": "http/json",
            "TRACING_SAMPLING_RATIO": "1",
        ]
    }

    /// An ingress built as `asnp ingress` builds it, on a free port of 127.0.0.1, with `variables`; runs `body` with its
    /// port, then shuts it down gracefully (which exports its last spans).
    static func withIngress(
        bootstrapServers: String,
        _ variables: [String: String],
        logger: Logger,
        _ body: (_ port: Int) async throws -> Void
    ) async throws {
        let settings = try await PipelineSettings.load(
            file: nil,
            environment: base.merging(variables) { $1 }.merging([
                "KAFKA_BOOTSTRAP_SERVERS": bootstrapServers, "INGRESS_HOST": "127.0.0.1", "INGRESS_PORT": "0",
                "INGRESS_STATUS_HOST": "127.0.0.1", "INGRESS_STATUS_PORT": "0", "INGRESS_EVENT_LOOP_THREADS": "1",
            ]) { $1 }
        ).ingressRole()
        let (ports, listening) = AsyncStream<Int>.makeStream()
        let role = try buildIngress(settings, logger: logger, onListening: { port in listening.yield(port) })
        let group = role.serviceGroup(logger: logger, gracefulShutdownSignals: [])
        let running = Task { try await group.run() }
        defer { running.cancel() }
        var iterator = ports.makeAsyncIterator()
        try await body(try #require(await iterator.next()))
        await group.triggerGracefulShutdown()
        try await running.value
    }

    /// Posts `body` until it is answered 200, as Apple sends a notification again after a 503 (the mock not
    /// acknowledging in time under load); returns its request id.
    static func post(_ body: String, port: Int, traceparent: String? = nil) async throws -> String {
        for attempt in 1... {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v2/notifications/sandbox")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: body))
            if let traceparent { request.headers.add(name: "traceparent", value: traceparent) }
            let reply = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let answer = String(buffer: try await reply.body.collect(upTo: 1 << 16))
            if reply.status == .ok { return try #require(reply.headers.first(name: "X-Request-ID")) }
            try #require(reply.status == .serviceUnavailable && attempt < 100, "\(reply.status): \(answer)")
            try await Task.sleep(for: .milliseconds(200))
        }
        preconditionFailure("unreachable: the loop returns or throws")
    }

    @Test(
        """
        tracing is off unless tracing.enabled; on, it exports OTLP/HTTP protobuf to localhost:4318/v1/traces as \
        asnp-ingress, sampling 1% of new traces; a bad endpoint, protocol or ratio is refused naming its key
        """
    )
    func settings() async throws {
        let defaults = try await Self.tracing([:])
        #expect(!defaults.isEnabled)
        #expect(defaults.endpoint == "http://localhost:4318/v1/traces")
        #expect(defaults.otlpProtocol == .httpProtobuf && defaults.samplingRatio == 0.01)
        #expect(defaults.serviceName == "asnp-ingress")
        let set = try await Self.tracing([
            "TRACING_ENABLED": "true", "TRACING_ENDPOINT": "https://collector.example:4318/v1/traces",
            "TRACING_PROTOCOL": "http/json", "TRACING_SAMPLING_RATIO": "0.25",
            "TRACING_HEADERS": "x-api-key=s3cret=, tenant=a", "TRACING_SERVICE_NAME": "notes-ingress",
        ])
        #expect(set.isEnabled && set.endpoint == "https://collector.example:4318/v1/traces")
        #expect(set.otlpProtocol == .httpJSON && set.samplingRatio == 0.25 && set.serviceName == "notes-ingress")
        #expect(set.headers == ["x-api-key": "s3cret=", "tenant": "a"])
        for (name, value, says) in [
            (
                "TRACING_ENDPOINT", "collector:4318",
                "tracing.endpoint (environment TRACING_ENDPOINT) is 'collector:4318'"
            ),
            ("TRACING_PROTOCOL", "grpc", "tracing.protocol (environment TRACING_PROTOCOL) is 'grpc', not one of"),
            ("TRACING_SAMPLING_RATIO", "1.5", "tracing.samplingRatio (environment TRACING_SAMPLING_RATIO) is 1.5"),
        ] {
            let error = await #expect(throws: SettingsError.self) { try await Self.tracing([name: value]) }
            #expect("\(error.map { "\($0)" } ?? "")".contains(says), "\(error.map { "\($0)" } ?? "")")
        }
    }

    @Test(
        """
        A notification posted with a traceparent gets a server span in that trace, child of the sender's span; one \
        posted without starts a trace of its own; either way the raw-topic message's traceparent names the request's \
        span; a request refused at its head is a span too, with its status
        """
    )
    func requestSpans() async throws {
        let logger = Logger.test("test.ingress-tracing")
        let collector = OTLPTestCollector()
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        try mock.createTopic(PipelineTopics.raw, partitions: 2)
        let senderTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
        let senderSpan = "00f067aa0ba902b7"
        let bodies = Fixtures.v2Cases.filter { $0.expectedStatus == "OK" }.prefix(2).map(\.body)
        var requestIDs: [String] = []  // the traced one first
        var refusedRequestID: String?
        try await collector.serve { endpoint in
            let bootstrapServers = mock.clusterConfiguration.bootstrapServers.joined(separator: ",")
            try await Self.withIngress(bootstrapServers: bootstrapServers, Self.tracingOn(endpoint), logger: logger) {
                port in
                requestIDs.append(
                    try await Self.post(bodies[0], port: port, traceparent: "00-\(senderTrace)-\(senderSpan)-01")
                )
                requestIDs.append(try await Self.post(bodies[1], port: port))
                var refused = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v2/notifications/staging")
                refused.method = .POST
                refused.body = .bytes(ByteBuffer(string: "{}"))
                let reply = try await HTTPClient.shared.execute(refused, timeout: .seconds(30))
                #expect(reply.status == .notFound)
                refusedRequestID = reply.headers.first(name: "X-Request-ID")
            }
        }
        #expect(collector.unreadableExports.isEmpty, "\(collector.unreadableExports)")
        let spans = Dictionary(
            collector.spans.compactMap { span in span.attributes["asnp.request_id"].map { ($0, span) } },
            uniquingKeysWith: { first, _ in first }
        )
        let traced = try #require(spans[requestIDs[0]], "\(collector.spans)")
        #expect(traced.traceID == senderTrace && traced.parentSpanID == senderSpan)
        #expect(traced.kind == 2 && traced.name == "POST /v2/notifications/{environment}")
        #expect(traced.attributes["http.response.status_code"] == "200" && traced.statusCode != 2)
        #expect(traced.serviceName == "asnp-ingress")
        let untraced = try #require(spans[requestIDs[1]])
        #expect(untraced.traceID != senderTrace && untraced.parentSpanID.isEmpty)
        let refusedID = try #require(refusedRequestID)
        let refusedSpan = try #require(spans[refusedID])
        #expect(refusedSpan.attributes["http.response.status_code"] == "404" && refusedSpan.statusCode != 2)

        // The raw-topic messages carry each request's span as their parent.
        var parents: [String: String] = [:]  // request id -> traceparent
        for message in try await PipelineRig.messages(of: PipelineTopics.raw, on: mock, logger: logger) {
            if let id = message.headers.first(named: RawNotificationHeaders.Name.requestID) {
                parents[id] = message.headers.first(named: TraceContextHeaders.traceparent)
            }
        }
        #expect(parents[requestIDs[0]] == "00-\(senderTrace)-\(traced.spanID)-01")
        #expect(parents[requestIDs[1]] == "00-\(untraced.traceID)-\(untraced.spanID)-01")
    }

    @Test(
        """
        One notification posted with a traceparent: the worker's span of its batch continues the request's trace, \
        a child of the ingress's span, with verify and store spans beneath it, and so does the span publishing its \
        events; the decoded and state events carry that trace (traceparent, ce_traceparent) for consumers to continue
        """
    )
    func workerContinuesTheRequestsTrace() async throws {
        let logger = Logger.test("test.worker-tracing")
        let collector = OTLPTestCollector()
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        try mock.createTopic(PipelineTopics.raw, partitions: 2)
        for topic in PipelineTopics.outputs { try mock.createTopic(topic, partitions: 2) }
        let bootstrapServers = mock.clusterConfiguration.bootstrapServers.joined(separator: ",")
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let senderTrace = "0af7651916cd43dd8448eb211c80319c"
        let body = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }?.body)
        var requestID = ""
        try await collector.serve { endpoint in
            let worker = try await InProcessWorker.start(
                bootstrapServers: bootstrapServers,
                databaseURL: server.url(database: database.database),
                extra: Self.tracingOn(endpoint)
            )
            defer { worker.cancel() }
            try await Self.withIngress(bootstrapServers: bootstrapServers, Self.tracingOn(endpoint), logger: logger) {
                port in
                requestID = try await Self.post(body, port: port, traceparent: "00-\(senderTrace)-b7ad6b7169203331-01")
                let stored = try await ReplayCommandTests.wait(
                    server,
                    database.database,
                    "SELECT count(*) FROM notifications",
                    "1",
                    worker: worker
                )
                try #require(stored, "the notification was not stored")
                let published = try await ReplayCommandTests.wait(
                    server,
                    database.database,
                    "SELECT count(*) FROM outbox",
                    "0",
                    worker: worker
                )
                try #require(published, "the events were not published")
                // Its freshness, stage by stage: one notification received, stored, and its two events published.
                var bytes: [UInt8] = []
                worker.role.worker.metrics.registry.emit(into: &bytes)
                let exposition = String(decoding: bytes, as: UTF8.self)
                for line in [
                    #"asnp_worker_signed_to_received_seconds_count{app="notes",environment="Sandbox",source="ingress"} 1"#,
                    #"asnp_worker_received_to_stored_seconds_count{app="notes",environment="Sandbox",source="ingress"} 1"#,
                    #"asnp_worker_stored_to_published_seconds_count{app="notes",environment="Sandbox"} 2"#,
                ] {
                    #expect(exposition.contains(line), "\(line)")
                }
            }
            // A graceful shutdown exports what is left before the exporter stops.
            try await worker.stop()
        }
        var events: [KafkaMessage] = []
        for topic in [PipelineTopics.decoded, PipelineTopics.subscriptionState] {
            events += try await PipelineRig.messages(of: topic, on: mock, logger: logger)
        }
        #expect(collector.unreadableExports.isEmpty, "\(collector.unreadableExports)")
        let trace = collector.spans.filter { $0.traceID == senderTrace }
        let request = try #require(trace.first { $0.attributes["asnp.request_id"] == requestID }, "\(collector.spans)")
        let batch = try #require(trace.first { $0.name == "process \(PipelineTopics.raw)" }, "\(trace)")
        #expect(batch.parentSpanID == request.spanID && batch.kind == 5 && batch.serviceName == "asnp-worker")
        #expect(batch.attributes["messaging.batch.message_count"] == "1" && batch.statusCode != 2)
        let verify = try #require(trace.first { $0.name == "verify" }, "\(trace)")
        let store = try #require(trace.first { $0.name == "store" }, "\(trace)")
        #expect(verify.parentSpanID == batch.spanID && verify.attributes["asnp.notifications.rejected"] == "0")
        #expect(store.parentSpanID == batch.spanID && store.statusCode != 2)

        // The publication: a producer span in the request's trace, the events in it.
        let send = try #require(trace.first { $0.name == "send" }, "\(trace)")
        #expect(send.parentSpanID == request.spanID && send.kind == 4 && send.serviceName == "asnp-worker")
        #expect(send.attributes["messaging.batch.message_count"] == "2" && send.statusCode != 2)
        #expect(events.count == 2, "a decoded and a state event")
        for event in events {
            let traceparent = event.headers.first(named: TraceContextHeaders.traceparent)
            #expect(traceparent == "00-\(senderTrace)-\(send.spanID)-01", "\(event.topic)")
            #expect(event.headers.first(named: OutputEvent.CloudEventsHeader.traceparent) == traceparent)
        }
    }

    @Test("A line logged within a span carries the span's trace_id and span_id (JSON logs join traces); none outside")
    func logsJoinTraces() throws {
        var configuration = TracingConfiguration(serviceName: "asnp-test")
        configuration.isEnabled = true
        configuration.samplingRatio = 1
        let backend = try TracingBackend.make(configuration, logger: Logger.test("test.tracing-logs"))
        let tracer = try #require(backend.tracer)
        let span = tracer.startSpan("work", context: .topLevel, ofKind: .internal)
        defer { span.end() }
        var headers: [KafkaHeader] = []
        tracer.inject(span.context, into: &headers, using: KafkaHeadersInjector())
        let traceparent = try #require(headers.first(named: TraceContextHeaders.traceparent))
        let parts = traceparent.split(separator: "-").map(String.init)
        try #require(parts.count == 4, "\(traceparent)")
        let inside = ServiceContext.withValue(span.context) { TracingBackend.loggingMetadataProvider.get() }
        #expect(inside["trace_id"].map { "\($0)" } == parts[1], "\(inside)")
        #expect(inside["span_id"].map { "\($0)" } == parts[2], "\(inside)")
        #expect(TracingBackend.loggingMetadataProvider.get()["trace_id"] == nil)
    }

    @Test(
        """
        asnp dev's stack with a tracing endpoint: one notification posted with a traceparent is one trace, the \
        ingress's request span (asnp-ingress) the parent of the worker's batch span (asnp-worker)
        """
    )
    func devStackTraces() async throws {
        let logger = Logger.test("test.dev-tracing")
        let collector = OTLPTestCollector()
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let roots = try RootCertificateFile.trustedRoots(
            paths: [Fixtures.directory.appendingPathComponent("test-root.der").path]
        )
        let senderTrace = "5c7e1f4a2b3d4e5f60718293a4b5c6d7"
        let body = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" }?.body)
        try await collector.serve { endpoint in
            var configuration = DevStackConfiguration(
                app: PipelineApp(
                    name: "notes",
                    bundleID: Fixtures.bundleId,
                    appAppleID: Fixtures.appAppleId,
                    sharedSecrets: []
                ),
                database: database,
                trustedRoots: roots
            )
            configuration.httpPort = 0
            configuration.workers = 1
            configuration.partitions = 2
            var tracing = TracingConfiguration(serviceName: "asnp-dev")
            tracing.isEnabled = true
            tracing.endpoint = endpoint
            tracing.otlpProtocol = .httpJSON
            tracing.samplingRatio = 1
            configuration.tracing = tracing
            let (ports, listening) = AsyncStream<Int>.makeStream()
            let stack = try await buildDevStack(configuration, logger: logger) { port in listening.yield(port) }
            let group = stack.serviceGroup(logger: logger, gracefulShutdownSignals: [])
            let running = Task { try await group.run() }
            defer { running.cancel() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            _ = try await Self.post(body, port: port, traceparent: "00-\(senderTrace)-1a2b3c4d5e6f7081-01")
            let stored = try await ReplayCommandTests.wait(
                server,
                database.database,
                "SELECT count(*) FROM notifications",
                "1"
            )
            try #require(stored, "the notification was not stored")
            await group.triggerGracefulShutdown()
            try await running.value
        }
        #expect(collector.unreadableExports.isEmpty, "\(collector.unreadableExports)")
        let trace = collector.spans.filter { $0.traceID == senderTrace }
        let request = try #require(trace.first { $0.serviceName == "asnp-ingress" }, "\(collector.spans)")
        let batch = try #require(trace.first { $0.serviceName == "asnp-worker" && $0.kind == 5 }, "\(trace)")
        #expect(batch.parentSpanID == request.spanID)
        #expect(Set(trace.filter { $0.parentSpanID == batch.spanID }.map(\.name)) == ["verify", "store"])
    }
}
