import AppStoreModels
import ArgumentParser
import CommandSupport
import Foundation
import Ingress
import KafkaClient
import LoadGeneration
import Logging
import NIOCore
import PipelineContract

/// One `asnp worker` process fed from a mock cluster in this process, for `asnp-bench worker`.
struct WorkerRun {
    static let rawTopic = PipelineTopics.raw
    static let group = "asnp-bench-workers"

    let bodies: [Data]
    let databaseURL: String
    let rootFile: URL
    let partitions: Int
    let window: Int
    let batchSize: Int
    /// Makes the output topics' broker unresponsive during the run; nil: no fault.
    var outputOutage: OutputOutage?
    let logger: Logger
    /// The worker's status server (`/metrics`) on 127.0.0.1; below Linux's ephemeral ports (32768 and up), so no
    /// outgoing connection holds it.
    private let statusPort = Int.random(in: 20_000...32_000)

    /// The output topics' broker answering nothing (a round trip as long as the outage) from `start` after the
    /// worker's first commit, for `duration`; the raw topic and the group's coordinator are on another broker.
    struct OutputOutage {
        var start: Duration
        var duration: Duration
    }

    /// The notifications committed by a moment of the run.
    typealias Mark = (instant: ContinuousClock.Instant, committed: Int)

    /// Notifications committed over part of a run.
    struct Phase {
        var name: String
        var elapsed: Duration
        var notifications: Int

        /// The part of the run between two marks.
        init(_ name: String, from start: Mark, to end: Mark) {
            self.name = name
            self.elapsed = start.instant.duration(to: end.instant)
            self.notifications = end.committed - start.committed
        }

        var rate: Double { Double(notifications) / max(elapsed.seconds, 0.001) }
    }

    /// What a run measured.
    struct Result {
        /// From the worker's first commit to its last (group joining excluded).
        var elapsed: Duration
        /// Notifications committed within `elapsed`.
        var notifications: Int
        /// The worker's resident memory, sampled once a second, with the notifications committed by then.
        var memory: [(committed: Int, residentBytes: Int)]
        /// The worker's CPU time (user + system) over the whole run.
        var workerCPUSeconds: Double
        /// With an output outage: before, during and after it.
        var phases: [Phase] = []
        /// With an output outage: decoded events on the output topic once the outbox drained, and how long after
        /// the last commit that was.
        var published: (events: Int, afterLastCommit: Duration)?
        /// The worker's offset commits (nil: a worker that does not count them), its transactions and its stored
        /// partition batches, over the whole run; nil when its metrics could not be read.
        var commits: (offsetCommits: Double?, transactions: Double, batches: Double)?

        /// Offset commits per stored partition batch, for the report.
        var commitReport: String {
            guard let commits else { return "offset commits: the worker's metrics were not read" }
            let perBatch = { (count: Double) in String(format: "%.3f", count / max(commits.batches, 1)) }
            let counted =
                commits.offsetCommits.map { "\(Int($0)) offset commits (\(perBatch($0)) per stored batch)" }
                ?? "offset commits not counted by this worker (one per transaction)"
            return "\(counted); \(Int(commits.transactions)) transactions (\(perBatch(commits.transactions)) per "
                + "batch) of \(Int(commits.batches)) stored partition batches"
        }

        func memoryReport(total: Int) -> String {
            func megabytes(_ bytes: Int) -> String { String(format: "%.0f MB", Double(bytes) / 1_048_576) }
            func at(_ fraction: Double) -> String {
                let sample = memory.first { Double($0.committed) >= fraction * Double(total) } ?? memory.last
                return sample.map { megabytes($0.residentBytes) } ?? "-"
            }
            let peak = memory.map(\.residentBytes).max() ?? 0
            let wall = elapsed.seconds
            return """
                worker RSS: \(at(0.1)) at 10%, \(at(0.5)) at 50%, \(at(1.0)) at the end, peak \(megabytes(peak)) \
                (\(memory.count) samples)
                worker CPU: \(String(format: "%.1f", workerCPUSeconds)) s over the run \
                (\(String(format: "%.0f", 100 * workerCPUSeconds / max(wall, 0.001)))% of one core per wall second)
                """
        }
    }

    func measure() async throws -> Result {
        let mock = try KafkaMockCluster(brokers: outputOutage == nil ? 1 : 2, logger: logger)
        try mock.createTopic(Self.rawTopic, partitions: partitions)
        for output in PipelineTopics.outputs {
            try mock.createTopic(output, partitions: partitions)
        }
        if outputOutage != nil {
            try mock.setGroupCoordinator(Self.group, broker: 1)
            for partition in 0..<Int32(partitions) {
                try mock.setPartitionLeader(topic: Self.rawTopic, partition: partition, broker: 1)
                for output in PipelineTopics.outputs {
                    try mock.setPartitionLeader(topic: output, partition: partition, broker: Self.outputBroker)
                }
            }
        }
        let worker = try startWorker(bootstrapServers: mock.bootstrapServers)
        defer { if worker.isRunning { worker.terminate() } }
        var rawProducer = KafkaProducerConfiguration(cluster: mock.clusterConfiguration)
        // Compressed as the ingress writes the raw topic, so the worker reads what it would read in production.
        let ingressDefaults = IngressConfiguration(apps: [])
        rawProducer.compression = ingressDefaults.rawTopicCompression
        rawProducer.compressionLevel = ingressDefaults.rawTopicCompressionLevel
        let producer = try KafkaProducer(configuration: rawProducer, logger: logger)
        let admin = try KafkaAdminClient(cluster: mock.clusterConfiguration, logger: logger)
        let result = try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await producer.run() }
            var result = try await feed(producer: producer, admin: admin, mock: mock, worker: worker)
            result.commits = try? await commitCounts()
            if outputOutage != nil { result.published = try await published(admin: admin, worker: worker) }
            tasks.cancelAll()
            return result
        }
        worker.terminate()
        await worker.exited()
        return result
    }

    /// The worker's offset commits (nil: not counted), transactions and stored partition batches so far.
    private func commitCounts() async throws -> (offsetCommits: Double?, transactions: Double, batches: Double) {
        func total(_ name: String) async throws -> Double? {
            let series = try await EndToEndPipeline.metric(name, ports: [statusPort])
            return series.isEmpty ? nil : series.values.reduce(0, +)
        }
        guard let transactions = try await total("asnp_worker_transaction_batches_count"),
            let batches = try await total("asnp_worker_batch_messages_count")
        else { throw BenchFailure("the worker's metrics have no transactions or batches") }
        return (try await total("asnp_worker_offset_commits_total"), transactions, batches)
    }

    /// The broker of the output topics in an outage run.
    private static let outputBroker: Int32 = 2

    /// Waits for a decoded event per notification on the output topic, for at most five minutes.
    private func published(admin: KafkaAdminClient, worker: Process) async throws -> (Int, Duration) {
        let start = ContinuousClock.now
        while true {
            let events = try await admin.messagesWritten(to: PipelineTopics.decoded)
            let waited = start.duration(to: .now)
            if events >= bodies.count || waited > .seconds(300) || !worker.isRunning { return (events, waited) }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Produces the bodies, never more than `window` ahead of the worker's commits, until every one is committed.
    private func feed(
        producer: KafkaProducer,
        admin: KafkaAdminClient,
        mock: KafkaMockCluster,
        worker: Process
    ) async throws -> Result {
        // The window bounds the total; the workload's keys spread unevenly and the worker drains partitions unevenly,
        // so the busiest partition is bounded too: a chunk is produced only while it holds at most half of what the
        // mock keeps of bodies this large, and a chunk is no larger than that half, which it may all land on (with
        // the window alone, the default --count lost messages).
        let partitionLimit = BenchKafkaCommand.bodiesKeptSafely(largestBody: bodies.map(\.count).max() ?? 1)
        let chunk = min(1_000, window, partitionLimit)
        var produced = 0
        var memory: [(committed: Int, residentBytes: Int)] = []
        var nextSample = ContinuousClock.now
        var start: Mark?
        var outage: (start: Mark, end: Mark?)?
        while true {
            guard worker.isRunning else {
                throw BenchFailure("the worker exited (status \(worker.terminationStatus)) before the end")
            }
            let lags = try await consumerLag(admin: admin)
            let lag = lags.reduce(0) { $0 + Int($1.lag) }
            let busiest = lags.map { Int($0.lag) }.max() ?? 0
            let committed = produced - lag
            let now = ContinuousClock.now
            if start == nil, committed > 0 { start = (now, committed) }
            if let planned = outputOutage, let begin = start {
                if outage == nil, now >= begin.instant.advanced(by: planned.start) {
                    try mock.setRoundTripTime(planned.duration, broker: Self.outputBroker)
                    outage = ((now, committed), nil)
                } else if let started = outage?.start, outage?.end == nil,
                    now >= started.instant.advanced(by: planned.duration)
                {
                    try mock.setRoundTripTime(.zero, broker: Self.outputBroker)
                    outage?.end = (now, committed)
                }
            }
            if now >= nextSample {
                memory.append((committed, ProcessStats.residentBytes(of: worker.processIdentifier)))
                nextSample = now.advanced(by: .seconds(1))
            }
            if produced == bodies.count, lag == 0 {
                memory.append((committed, ProcessStats.residentBytes(of: worker.processIdentifier)))
                let begin = start ?? (now, 0)
                var phases: [Phase] = []
                if outputOutage != nil {
                    guard let outageStart = outage?.start, let outageEnd = outage?.end else {
                        try? mock.setRoundTripTime(.zero, broker: Self.outputBroker)
                        throw BenchFailure(
                            "the worker committed everything before the output outage ended: give more --count"
                        )
                    }
                    phases = [
                        Phase("before the outage", from: begin, to: outageStart),
                        Phase("output brokers unresponsive", from: outageStart, to: outageEnd),
                        Phase("after the outage", from: outageEnd, to: (now, committed)),
                    ]
                }
                return Result(
                    elapsed: now - begin.instant,
                    notifications: bodies.count - begin.committed,
                    memory: memory,
                    workerCPUSeconds: ProcessStats.cpuSeconds(of: worker.processIdentifier),
                    phases: phases
                )
            }
            if produced < bodies.count, lag + chunk <= window, busiest <= partitionLimit {
                let next = bodies[produced..<min(produced + chunk, bodies.count)]
                for report in await producer.send(contentsOf: next.map(message(for:))) { _ = try report.get() }
                produced += next.count
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// The group's lag on each partition of the raw topic. During an output outage a metadata request may go to the
    /// unresponsive broker and time out: the bench's own reading is tried again, soon, rather than failing the run or
    /// holding up the producer.
    private func consumerLag(admin: KafkaAdminClient) async throws -> [KafkaPartitionLag] {
        let (timeout, attempts): (Duration, Int) = outputOutage == nil ? (.seconds(10), 1) : (.seconds(1), 30)
        var attempt = 1
        while true {
            do {
                return try await admin.consumerLag(group: Self.group, topic: Self.rawTopic, timeout: timeout)
            } catch {
                guard attempt < attempts else { throw error }
                attempt += 1
            }
        }
    }

    private func message(for body: Data) -> KafkaProducerMessage {
        KafkaProducerMessage.rawNotification(body: body, app: "bench", topic: Self.rawTopic)
    }

    private func startWorker(bootstrapServers: String) throws -> Process {
        let worker = Process()
        worker.executableURL = try ASNPBench.pipelineExecutable()
        worker.arguments = ["worker", "--log-level", "warning"]
        var environment = ProcessInfo.processInfo.environment
        environment["KAFKA_BOOTSTRAP_SERVERS"] = bootstrapServers
        environment["APPS_NAMES"] = "bench"
        environment["APPS_BENCH_BUNDLE_ID"] = VerifyWorkload.bundleId
        // The workload is Sandbox; an Apple id only keeps the worker from warning that Production is unverifiable.
        environment["APPS_BENCH_APP_APPLE_ID"] = "1234567890"
        environment["DATABASE_URL"] = databaseURL
        environment["WORKER_ROOT_CERTIFICATES"] = rootFile.path
        environment["WORKER_GROUP_ID"] = Self.group
        environment["WORKER_BATCH_SIZE"] = String(batchSize)
        environment["WORKER_STATUS_HOST"] = "127.0.0.1"
        environment["WORKER_STATUS_PORT"] = String(statusPort)
        worker.environment = environment
        worker.standardOutput = FileHandle.nullDevice
        try worker.run()
        return worker
    }
}
