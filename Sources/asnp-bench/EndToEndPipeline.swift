import AsyncHTTPClient
import CommandSupport
import Foundation
import LoadGeneration
import NIOCore
import NIOHTTP1
import PipelineContract

/// The pipeline `asnp-bench e2e` measures, as separate processes as it is deployed: `asnp kafka-mock` (librdkafka's
/// mock broker standing in for Kafka), `asnp ingress` and `asnp worker`s on one database, each configured through
/// its environment. Separate processes let each one's CPU and memory be measured.
struct EndToEndPipeline {
    static let app = "notes"
    static let rawTopic = PipelineTopics.raw
    static let decodedTopic = PipelineTopics.decoded
    static let topics = [rawTopic, decodedTopic, PipelineTopics.subscriptionState, PipelineTopics.deadLetter]

    let mock: KafkaMockChild
    let ingress: Process
    let workers: [Process]
    /// The status servers (`/metrics`) on 127.0.0.1: the ingress's, the workers'.
    let ingressStatusPort: Int
    let workerStatusPorts: [Int]
    /// Where the ingress takes V2 notifications.
    let url: String

    /// The processes by role, for measuring.
    var roles: [(role: Role, pid: Int32)] {
        [(.mockBroker, mock.pid), (.ingress, ingress.processIdentifier)]
            + workers.map { (Role.workers, $0.processIdentifier) }
    }

    typealias Role = EndToEndStep.Role

    /// Applies the migrations to `databaseURL`, starts the mock cluster (`brokers` brokers, topics of `partitions`
    /// partitions), the ingress on a free loopback port and `workers` workers, and waits until the ingress is ready.
    static func start(
        databaseURL: String,
        rootFile: URL,
        bundleId: String,
        brokers: Int,
        partitions: Int,
        workers workerCount: Int
    ) async throws -> EndToEndPipeline {
        let migrate = try child(["migrate", "--database-url", databaseURL], environment: [:])
        await migrate.exited()
        guard migrate.terminationStatus == 0 else {
            throw PipelineStartError(description: "asnp migrate failed (status \(migrate.terminationStatus))")
        }
        let mock = try await KafkaMockChild.start(
            executable: ASNPBench.pipelineExecutable(),
            arguments: topics.flatMap { ["--topic", "\($0):\(partitions)"] }
                + ["--brokers", String(brokers), "--log-level", "error"]
        )
        // Below Linux's ephemeral ports (32768 and up), so no outgoing connection holds one.
        let ports = Array((20_000...32_000).shuffled().prefix(2 + workerCount))
        let (port, statusPort) = (ports[0], ports[1])
        let common = [
            "KAFKA_BOOTSTRAP_SERVERS": mock.bootstrapServers, "APPS_NAMES": app,
            "APPS_\(app.uppercased())_BUNDLE_ID": bundleId,
        ]
        // The raw topic's producer reports what it wrote every second rather than every 10 s, so a step's
        // `asnp_ingress_raw_topic_*` figures lag it little; after any properties given for the run.
        let kafkaProperties = [ProcessInfo.processInfo.environment["KAFKA_PROPERTIES"], "statistics.interval.ms=1000"]
            .compactMap { $0 }.joined(separator: ",")
        // One HTTP thread, as the Kubernetes base runs the ingress (Deploy/kubernetes/base/settings.env).
        let ingress = try child(
            ["ingress", "--log-level", "error"],
            environment: common.merging([
                "INGRESS_HOST": "127.0.0.1", "INGRESS_PORT": String(port), "INGRESS_EVENT_LOOP_THREADS": "1",
                "INGRESS_STATUS_HOST": "127.0.0.1", "INGRESS_STATUS_PORT": String(statusPort),
                "KAFKA_PROPERTIES": kafkaProperties,
            ]) { $1 }
        )
        let workers = try ports.dropFirst(2).map { statusPort in
            try child(
                ["worker", "--log-level", "error"],
                environment: common.merging([
                    "DATABASE_URL": databaseURL, "WORKER_ROOT_CERTIFICATES": rootFile.path,
                    "WORKER_STATUS_HOST": "127.0.0.1", "WORKER_STATUS_PORT": String(statusPort),
                ]) { $1 }
            )
        }
        let pipeline = EndToEndPipeline(
            mock: mock,
            ingress: ingress,
            workers: workers,
            ingressStatusPort: statusPort,
            workerStatusPorts: Array(ports.dropFirst(2)),
            url: "http://127.0.0.1:\(port)/v2/notifications/sandbox"
        )
        guard try await pipeline.ingressIsReady(statusPort: statusPort) else {
            await pipeline.terminate()
            throw PipelineStartError(description: "asnp ingress was not ready within 30 seconds")
        }
        return pipeline
    }

    /// SIGTERM to every process, the broker last; waits for them.
    func terminate() async {
        for process in [ingress] + workers where process.isRunning { process.terminate() }
        for process in [ingress] + workers { await process.exited() }
        await mock.terminate()
    }

    /// The sum over the workers of each series of the metric `name` (its labels as written), from their
    /// `/metrics`; a worker that does not answer counts nothing.
    func workerMetric(_ name: String) async throws -> [String: Double] {
        try await Self.metric(name, ports: workerStatusPorts)
    }

    /// The ingress's value of the unlabelled metric `name`; 0 when it does not answer or has no such series yet.
    func ingressMetric(_ name: String) async throws -> Double {
        try await Self.metric(name, ports: [ingressStatusPort])[""] ?? 0
    }

    /// The sum over the status servers on `ports` of each series of the metric `name` (its labels as written).
    static func metric(_ name: String, ports: [Int]) async throws -> [String: Double] {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var sums: [String: Double] = [:]
        for port in ports {
            guard
                let reply = try? await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"),
                    timeout: .seconds(10)
                ),
                reply.status == .ok,
                let body = try? await reply.body.collect(upTo: 16 << 20)
            else { continue }
            for line in String(buffer: body).split(separator: "\n") where line.hasPrefix(name) {
                let parts = line.split(separator: " ")
                let labels = parts[0].dropFirst(name.count)
                // Another metric whose name begins with this one's.
                guard labels.isEmpty || labels.hasPrefix("{") else { continue }
                guard parts.count >= 2, let value = Double(parts[1]) else { continue }
                sums[String(labels), default: 0] += value
            }
        }
        try await client.shutdown()
        return sums
    }

    private func ingressIsReady(statusPort: Int) async throws -> Bool {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let ready = try await ReadinessProbe.waitUntilReady(
            statusPort: statusPort,
            client: client,
            within: .seconds(30)
        )
        try await client.shutdown()
        return ready
    }

    /// `asnp arguments...` with `environment` added to this process's; its output discarded.
    private static func child(_ arguments: [String], environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = try ASNPBench.pipelineExecutable()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    struct PipelineStartError: Error, CustomStringConvertible {
        var description: String
    }
}
