import ArgumentParser
import CommandSupport
import Foundation
import Ingress
import KafkaClient
import LoadGeneration
import Logging
import PipelineContract
import ServiceLifecycle

/// `asnp-bench ingress`: HTTP throughput and acknowledgement latency of the ingress under `wrk`, side by side with
/// a baseline server on the same HTTP stack that answers without producing, in the same run.
struct BenchIngressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingress",
        abstract: "Measure the ingress (POST to broker acknowledgement) against a baseline that does not produce.",
        discussion: """
            Starts `asnp kafka-mock` as a separate process and, in this process, the ingress on 127.0.0.1. `wrk` \
            (Debian's `wrk`, installed by scripts/bootstrap) posts realistic signed V2 bodies of many \
            subscriptions over --connections connections for --seconds: first at full speed (peak), then at \
            --load-fraction of that peak (each connection pausing between requests). The same is done against \
            a server on the same HTTP stack that answers 200 after reading, checking and keying the body \
            without producing it: the baseline that shows what waiting for the broker's acknowledgement costs. Reports \
            requests/s, p50 and p99 latency and the ratio of the ingress's peak to the baseline's. wrk is a \
            closed-loop client: latencies at reduced load are measured from each request's send, so queueing \
            the client did not send does not show; and each connection waits for its answer, so too few \
            connections measure the latency rather than the peak (the raw topic's producer gathers messages \
            for \(lingerMilliseconds) ms: 32 connections cannot pass \(32_000 / lingerMilliseconds) requests/s).
            """
    )

    /// How long the ingress's raw-topic producer gathers messages, which bounds each connection's rate.
    private static let lingerMilliseconds = max(1, Int(IngressConfiguration(apps: []).rawTopicLinger.seconds * 1_000))

    @Option(help: "Seconds each wrk run lasts.")
    var seconds = 10

    @Option(help: "Concurrent connections: enough to keep the ingress busy while each waits for its answer.")
    var connections = 128

    @Option(help: "wrk threads.")
    var threads = 2

    @Option(help: "The reduced load, as a fraction of the measured peak.")
    var loadFraction = 0.7

    @Option(help: "Distinct bodies (subscriptions) posted in rotation.")
    var bodies = 2_000

    @Option(help: "Partitions of the raw topic.")
    var partitions = 16

    @Option(help: "The wrk executable.")
    var wrk = "wrk"

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    func validate() throws {
        guard seconds > 0, connections > 0, threads > 0, bodies > 0, partitions > 0 else {
            throw ValidationError("--seconds, --connections, --threads, --bodies and --partitions must be positive")
        }
        guard loadFraction > 0, loadFraction <= 1 else { throw ValidationError("--load-fraction must be in (0, 1]") }
    }

    struct Row: Encodable {
        var server: String
        var load: String
        var requestsPerSecond: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        var failures: Int
    }

    func run() async throws {
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/bin/sh")
        check.arguments = ["-c", "command -v \(wrk) >/dev/null"]
        try check.run()
        check.waitUntilExit()
        guard check.terminationStatus == 0 else {
            throw BenchFailure("\(wrk) is not installed: run scripts/bootstrap (apt-get install wrk)")
        }
        var logger = Logger(label: "asnp.bench.ingress", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .critical

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let workload = try VerifyWorkload(count: bodies, chains: 1)
        let bodiesFile = directory.appendingPathComponent("bodies.txt")
        try Data(workload.bodies.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n").utf8)
            .write(to: bodiesFile)
        let scriptFile = directory.appendingPathComponent("post.lua")
        try Data(WrkRun.script.utf8).write(to: scriptFile)

        let mock = try await KafkaMockChild.start(
            executable: ASNPBench.pipelineExecutable(),
            arguments: ["--topic", "\(PipelineTopics.raw):\(partitions)"]
        )
        defer { mock.stop() }

        var rows: [Row] = []
        for (name, producing) in [("ingress (Kafka ack)", true), ("baseline (no Kafka)", false)] {
            try await withIngress(producing: producing, bootstrap: mock.bootstrapServers, logger: logger) { url in
                func measure(delay: Double, seconds: Int) async throws -> WrkRun {
                    try await WrkRun.run(
                        wrk: wrk,
                        url: url,
                        bodiesFile: bodiesFile,
                        scriptFile: scriptFile,
                        connections: connections,
                        threads: threads,
                        seconds: seconds,
                        delayMilliseconds: delay
                    )
                }
                // Warm up: connections, the producer's id and metadata, caches.
                _ = try await measure(delay: 0, seconds: 2)
                let peak = try await measure(delay: 0, seconds: seconds)
                rows.append(Row(name: name, load: "peak", run: peak))
                // Each connection's cycle is its mean latency plus the pause. Latency falls with the load, so
                // calibrate the pause in short runs (mean latency = cycle measured - pause), then measure.
                let target = peak.requestsPerSecond * loadFraction
                let cycle = Double(connections) / target * 1_000
                var delay = max(0, cycle - peak.p50 * 1_000)
                for _ in 0..<3 {
                    let trial = try await measure(delay: delay, seconds: min(3, seconds))
                    let latency = Double(connections) / trial.requestsPerSecond * 1_000 - delay
                    delay = max(0, cycle - latency)
                }
                let reduced = try await measure(delay: delay, seconds: seconds)
                let achieved = Int((reduced.requestsPerSecond / peak.requestsPerSecond * 100).rounded())
                rows.append(Row(name: name, load: "\(achieved)% of peak", run: reduced))
            }
        }
        report(rows)
    }

    /// Runs an ingress on 127.0.0.1 (a free port) around `body`.
    private func withIngress(
        producing: Bool,
        bootstrap: String,
        logger: Logger,
        _ body: (URL) async throws -> Void
    ) async throws {
        var configuration = IngressConfiguration(
            apps: [PipelineApp(name: "bench", bundleID: VerifyWorkload.bundleId)]
        )
        configuration.host = "127.0.0.1"
        configuration.port = 0
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let services: [ServiceGroupConfiguration.ServiceConfiguration]
        if producing {
            let producer = try KafkaProducer(
                configuration: configuration.producerConfiguration(
                    cluster: KafkaClusterConfiguration(bootstrapServers: bootstrap)
                ),
                logger: logger
            )
            let server = try IngressServer(
                configuration: configuration,
                producer: producer,
                logger: logger,
                onListening: { portContinuation.yield($0) }
            )
            services = [.init(service: producer), .init(service: server)]
        } else {
            services = [
                .init(
                    service: BaselineIngressServer(
                        configuration: configuration,
                        logger: logger,
                        onListening: { portContinuation.yield($0) }
                    )
                )
            ]
        }
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { portContinuation.finish() }
                try await group.run()
            }
            guard let port = await ports.first(where: { _ in true }) else {
                throw BenchFailure("the ingress did not start")
            }
            do {
                try await body(URL(string: "http://127.0.0.1:\(port)/v2/notifications/sandbox")!)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    private func report(_ rows: [Row]) {
        let peak = { (server: String) in rows.first { $0.server.hasPrefix(server) && $0.load == "peak" } }
        let ratio = (peak("ingress")?.requestsPerSecond ?? 0) / max(1, peak("baseline")?.requestsPerSecond ?? 1)
        if json {
            struct Output: Encodable {
                var rows: [Row]
                var peakRatioToBaseline: Double
            }
            TextColumns.printJSON(Output(rows: rows, peakRatioToBaseline: ratio))
            return
        }
        let widths = [22, 14, 12, 10, 10, 9]
        print(
            "Ingress: POST /v2/notifications/sandbox, \(connections) connections, \(threads) wrk threads, \(seconds) s per run"
        )
        print(TextColumns.line(["server", "load", "requests/s", "p50 ms", "p99 ms", "failures"], widths: widths))
        for row in rows {
            print(
                TextColumns.line(
                    [
                        row.server, row.load, String(format: "%.0f", row.requestsPerSecond),
                        String(format: "%.2f", row.p50Milliseconds), String(format: "%.2f", row.p99Milliseconds),
                        String(row.failures),
                    ],
                    widths: widths
                )
            )
        }
        print(String(format: "Peak requests/s of the ingress: %.2f× the baseline's (measured in this run).", ratio))
    }
}

extension BenchIngressCommand.Row {
    init(name: String, load: String, run: WrkRun) {
        self.init(
            server: name,
            load: load,
            requestsPerSecond: run.requestsPerSecond,
            p50Milliseconds: run.p50 * 1_000,
            p99Milliseconds: run.p99 * 1_000,
            failures: run.failures
        )
    }
}
