import AppStoreSigning
import ArgumentParser
import CommandSupport
import Foundation
import KafkaClient
import LoadGeneration
import Logging
import NotificationStore
import PostgresRuntime

/// `asnp-bench e2e`: the whole pipeline — broker, ingress, workers, as separate processes, on a real PostgreSQL —
/// driven by signed load at increasing rates, measured from POST to committed row.
struct BenchEndToEndCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "e2e",
        abstract: "Measure the whole pipeline from POST to committed PostgreSQL row at increasing rates.",
        discussion: """
            Generates realistic signed V2 notifications of many subscriptions (in --subscription-order, 5% \
            duplicates, 10% neighbours swapped) and times `asnp verify \
            --jsonl` on 20,000 of them with all cores (the baseline: the work no pipeline can skip). Starts the \
            pipeline as it is deployed, as child processes: `asnp kafka-mock` (--brokers brokers) for Kafka, `asnp \
            ingress` and --workers `asnp worker`s on a scratch database of the server of --database-url (dropped \
            afterwards). Then it posts one step of --step-seconds at each rate of --rates (open loop: latency counts \
            from when a request was due); a step whose backlog could outgrow what the mock keeps (~5 MB per partition) \
            is not run, nor those after it. Per step: the rate achieved, the distinct notifications first posted in it \
            (new/s), ingress latency, notifications stored and decoded events published per second, the bytes a \
            notification cost the raw topic (its produce batches after compression, per replica, from the ingress's \
            asnp_ingress_raw_topic_* metrics) and notifications per batch, the workers' lag at the step's end (notifications answered 200 and not yet stored, counted in the database), the CPU of \
            each process (and of PostgreSQL when it runs on this machine) and their memory. At the end it waits for \
            the backlog to drain and fails unless every notification answered 200 is stored, matched by \
            notificationUUID (bodies never answered 200 are counted apart, with how many were stored anyway): zero \
            loss. The baseline is timed again once the pipeline has stopped and its writes are synced (a VM's speed \
            drifts within minutes). The summary names the highest step sustained (stored ≥ 95% of new, ingress p99 ≤ \
            50 ms) as a ratio to the mean of the two baselines, and the CPU the ingress, the workers and PostgreSQL \
            spent per notification stored in that step, in verifications (one is the baseline's CPU per \
            notification: the cores over its rate).
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Offered rates, notifications/s, comma-separated: one step each.")
    var rates = "1000,1500,2000,2500,3000"

    @Option(help: "Seconds per step.")
    var stepSeconds = 20

    @Option(help: "Worker processes.")
    var workers = 2

    @Option(
        help: """
            Brokers of the mock cluster. A production cluster has three or more; with one, all of the ingress's \
            produce requests (one partition each, one at a time per broker) queue on a single connection.
            """
    )
    var brokers = 3

    @Option(
        help: """
            How a subscription's notifications follow one another: interleaved (consecutive ones of different \
            subscriptions, as in the field) or lifecycle (each subscription's six in a row, filling produce batches \
            together; the order before 2026-11-29).
            """
    )
    var subscriptionOrder: LoadWorkload.SubscriptionOrder = .interleaved

    @Option(help: "Partitions of the raw topic (the mock keeps ~5 MB each: enough for the backlog).")
    var partitions = 64

    @Option(help: "HTTP connections posting.")
    var connections = 64

    @Option(help: "Also write the steps to this CSV file (for Benchmarks/python/plot_e2e.py).")
    var csv: String?

    @Option(help: "Also write each process's RSS, sampled once a second through every step, to this CSV file.")
    var memoryCSV: String?

    func validate() throws {
        guard !offered.isEmpty, offered.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("--rates must be positive numbers, e.g. 500,1000")
        }
        guard stepSeconds > 0, workers > 0, partitions > 0, connections > 0 else {
            throw ValidationError("--step-seconds, --workers, --partitions and --connections must be positive")
        }
        guard (1...32).contains(brokers) else { throw ValidationError("--brokers must be 1 to 32") }
    }

    private static let warmUpCount = 500
    private static let baselineCount = 20_000

    private var offered: [Double] { rates.split(separator: ",").compactMap { Double($0) } }

    func run() async throws {
        var logger = Logger(label: "asnp.bench.e2e", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        let configuration = try database.configuration()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let steps = offered.map { rate in (rate: rate, count: Int(rate * Double(stepSeconds))) }
        let total = steps.map(\.count).reduce(0, +)
        BenchWorkerCommand.note("signing \(total) notifications...")
        let pki = try TestPKI()
        let rootFile = directory.appendingPathComponent("root.der")
        try Data(try pki.rootDER()).write(to: rootFile)
        let bundleId = "com.example.notes"
        let workload = try LoadWorkload.make(
            count: total + Self.warmUpCount,
            bundleId: bundleId,
            pki: pki,
            duplicateShare: 0.05,
            outOfOrderShare: 0.1,
            hostileShare: 0,
            order: subscriptionOrder,
            seed: 1
        )

        // The baseline, in the same run: the same notifications verified and decoded by `asnp verify --jsonl` with
        // the whole machine to itself, the work no pipeline can skip.
        BenchWorkerCommand.note("baseline: asnp verify --jsonl on \(Self.baselineCount) of the notifications...")
        let baselineInput = directory.appendingPathComponent("baseline.jsonl")
        try VerifyWorkload.writeJSONLines(workload.bodies.prefix(Self.baselineCount), to: baselineInput)
        func verificationRate() throws -> Double {
            let baseline = try BenchWorkerCommand.timeVerification(
                input: baselineInput,
                root: rootFile,
                bundleId: bundleId
            )
            return Double(min(Self.baselineCount, workload.bodies.count)) / baseline.seconds
        }
        let before = try verificationRate()

        let rows = try await ScratchDatabase.with(on: configuration, prefix: "asnp_bench_e2e", logger: logger) {
            scratch in
            try await measure(
                workload: workload,
                scratch: scratch,
                rootFile: rootFile,
                bundleId: bundleId,
                logger: logger
            )
        }
        // Again with the pipeline stopped: the machine's speed drifts, by a fifth within minutes on a VM. First the
        // file system writes back what PostgreSQL wrote, which otherwise takes the kernel's CPU during the timing.
        BenchWorkerCommand.note("baseline again: asnp verify --jsonl on \(Self.baselineCount) of the notifications...")
        sync()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        print(EndToEndStep.summary(rows, baselines: (before, try verificationRate()), cores: cores))
    }

    /// Starts the pipeline on `scratch`, warms it up, runs the steps, waits for the backlog, prints the report and
    /// stops the pipeline; throws if an accepted notification was not stored. The steps, for the summary.
    private func measure(
        workload: LoadWorkload,
        scratch scratchConfiguration: NotificationStoreConfiguration,
        rootFile: URL,
        bundleId: String,
        logger: Logger
    ) async throws -> [EndToEndStep] {
        BenchWorkerCommand.note("starting asnp kafka-mock, asnp ingress, \(workers) asnp worker...")
        let pipeline = try await EndToEndPipeline.start(
            databaseURL: try BenchWorkerCommand.url(configuration: database, database: scratchConfiguration.database),
            rootFile: rootFile,
            bundleId: bundleId,
            brokers: brokers,
            partitions: partitions,
            workers: workers
        )
        let outcome: Result<[EndToEndStep], any Error>
        do {
            outcome = .success(
                try await NotificationStore.withRunning(configuration: scratchConfiguration, logger: logger) { store in
                    try await measure(workload: workload, pipeline: pipeline, store: store)
                }
            )
        } catch {
            outcome = .failure(error)
        }
        await pipeline.terminate()
        return try outcome.get()
    }

    private func measure(
        workload: LoadWorkload,
        pipeline: EndToEndPipeline,
        store: NotificationStore
    ) async throws -> [EndToEndStep] {
        func stored() async throws -> Int {
            Int(try await store.execute("SELECT count(*)::text FROM notifications")[0]) ?? 0
        }
        var logger = Logger(label: "asnp.bench.e2e.kafka")
        logger.logLevel = .error
        let admin = try KafkaAdminClient(
            cluster: KafkaClusterConfiguration(bootstrapServers: pipeline.mock.bootstrapServers),
            logger: logger
        )
        /// Decoded events on the output topic.
        func published() async throws -> Int {
            try await admin.messagesWritten(to: EndToEndPipeline.decodedTopic)
        }

        // One backend of the server leads to its postmaster, whose process tree is PostgreSQL's CPU.
        let postmaster = Int32(try await store.execute("SELECT pg_backend_pid()::text")[0]).flatMap {
            ProcessStats.postmaster(ofBackend: $0)
        }
        // Each body is judged by its notification: a retry is a copy of an earlier body.
        let uuids = try workload.bodies.map { body in
            guard let uuid = LoadWorkload.notificationUUID(of: body) else {
                throw BenchFailure("a body of the workload has no notificationUUID to match it with what is stored")
            }
            return uuid
        }
        /// Notifications answered 200 at least once: each must be stored.
        var accepted = Set<String>()
        /// Notifications posted, answered 200 or not.
        var posted = Set<String>()
        func account(_ bodies: Range<Int>, _ report: LoadRun.Report) {
            let unanswered = Set(report.unanswered)
            for (position, index) in bodies.enumerated() {
                posted.insert(uuids[index])
                if !unanswered.contains(position) { accepted.insert(uuids[index]) }
            }
        }
        func storedUUIDs() async throws -> Set<String> {
            Set(try await store.execute("SELECT notification_uuid::text FROM notifications"))
        }
        /// The accepted notifications not stored.
        func missing() async throws -> Set<String> {
            accepted.subtracting(try await storedUUIDs())
        }
        /// Waits (at most `limit`) until everything accepted is stored; the count stored.
        func drained(within limit: Duration) async throws -> Int {
            let deadline = ContinuousClock.now.advanced(by: limit)
            // Counting is cheap; the exact comparison is made once the count allows it.
            while try await stored() < accepted.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .seconds(1))
            }
            while try await !missing().isEmpty, ContinuousClock.now < deadline {
                try await Task.sleep(for: .seconds(1))
            }
            return try await stored()
        }

        // Connections, the producer's metadata, the group's first assignment: not part of any step.
        BenchWorkerCommand.note("warming up: \(Self.warmUpCount) notifications...")
        let warmUp = workload.bodies.prefix(Self.warmUpCount)
        account(
            warmUp.indices,
            try await LoadRun(url: pipeline.url, connections: connections, rate: offered[0]).run(Array(warmUp))
        )
        _ = try await drained(within: .seconds(120))

        var rows: [EndToEndStep] = []
        var memory: [(rate: Double, memory: EndToEndStep.Memory)] = []
        var notRun: String?
        var offset = warmUp.count
        // What a step leaves unstored waits on the raw topic, and the mock keeps ~5 MB per partition: older messages
        // are deleted, lost to the pipeline and failing the run. A step whose backlog could outgrow what the
        // partitions hold safely is not run, nor any after it.
        let backlogLimit =
            partitions
            * BenchKafkaCommand.bodiesKeptSafely(largestBody: workload.bodies.lazy.map(\.utf8.count).max() ?? 1)
        for rate in offered {
            if let last = rows.last,
                let reason = EndToEndStep.backlogRisk(
                    backlog: last.backlog,
                    stored: last.stored,
                    newShare: last.posted > 0 ? last.new / last.posted : 1,
                    next: rate,
                    stepSeconds: stepSeconds,
                    limit: backlogLimit
                )
            {
                notRun = "steps from \(Int(rate))/s not run: \(reason)"
                break
            }
            BenchWorkerCommand.note("step: \(Int(rate))/s for \(stepSeconds) s...")
            let bodies = workload.bodies[offset..<(offset + Int(rate * Double(stepSeconds)))]
            offset = bodies.endIndex
            let storedBefore = try await stored()
            let publishedBefore = try await published()
            let processes = pipeline.roles
            let sampler = Task {
                var samples: [EndToEndStep.Memory] = []
                while !Task.isCancelled {
                    samples.append(.take(processes))
                    try? await Task.sleep(for: .seconds(1))
                }
                return samples
            }
            let rawBefore = try await EndToEndStep.RawTopic.take(pipeline)
            let cpuBefore = EndToEndStep.CPU.Sample.take(pipeline, postmaster: postmaster)
            let report = try await LoadRun(url: pipeline.url, connections: connections, rate: rate).run(Array(bodies))
            let cpuAfter = EndToEndStep.CPU.Sample.take(pipeline, postmaster: postmaster)
            sampler.cancel()
            memory += await sampler.value.map { (rate, $0) }
            let elapsed = cpuBefore.instant.duration(to: cpuAfter.instant).seconds
            let storedAfter = try await stored()
            let publishedAfter = try await published()
            let rawAfter = try await EndToEndStep.RawTopic.take(pipeline)
            let distinctBefore = posted.count
            account(bodies.indices, report)
            rows.append(
                EndToEndStep(
                    offered: rate,
                    posted: report.requestsPerSecond,
                    new: Double(posted.count - distinctBefore) / elapsed,
                    ok: report.ok,
                    notOK: report.sent - report.ok,
                    p50: report.p50Milliseconds,
                    p99: report.p99Milliseconds,
                    stored: Double(storedAfter - storedBefore) / elapsed,
                    published: Double(publishedAfter - publishedBefore) / elapsed,
                    backlog: accepted.count - storedAfter,
                    rawTopic: EndToEndStep.RawTopic(from: rawBefore, to: rawAfter),
                    cpu: EndToEndStep.CPU(from: cpuBefore, to: cpuAfter),
                    memory: .take(processes)
                )
            )
        }
        BenchWorkerCommand.note("draining the backlog...")
        let last = try await drained(within: .seconds(300))
        // One decoded event per stored notification (more only if a publish was repeated), published after the
        // batch's commit: wait for the last ones.
        var events = try await published()
        let eventsDeadline = ContinuousClock.now.advanced(by: .seconds(60))
        while events < last, ContinuousClock.now < eventsDeadline {
            try await Task.sleep(for: .milliseconds(500))
            events = try await published()
        }

        if let csv {
            try Data(EndToEndStep.csv(rows).utf8).write(to: URL(fileURLWithPath: csv))
        }
        if let memoryCSV {
            let header = (["second", "offered"] + EndToEndStep.Memory.csvHeader).joined(separator: ",")
            let lines = memory.enumerated().map { second, sample in
                ([String(second), String(sample.rate)] + sample.memory.megabytes).joined(separator: ",")
            }
            try Data(([header] + lines).joined(separator: "\n").utf8 + Data("\n".utf8))
                .write(to: URL(fileURLWithPath: memoryCSV))
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        EndToEndStep.print(
            rows,
            title: "asnp kafka-mock, asnp ingress, \(workers) asnp worker, PostgreSQL"
                + (postmaster == nil ? " (elsewhere)" : "") + " on \(cores) cores; \(partitions) raw partitions, "
                + "\(brokers) brokers"
        )
        if let notRun { print(notRun) }
        let storedNow = try await storedUUIDs()
        let lost = accepted.subtracting(storedNow)
        let refusedOnly = posted.subtracting(accepted)
        let storedAnyway = refusedOnly.intersection(storedNow).count
        print("answered 200: \(accepted.count) distinct notifications; stored: \(last); lost: \(lost.count)")
        if !refusedOnly.isEmpty {
            print(
                "never answered 200: \(refusedOnly.count) distinct notifications (Apple would post them again), "
                    + "\(storedAnyway) of them stored anyway"
            )
        }
        print("decoded events published: \(events), for \(last) notifications stored")
        // Events sent again after an unacknowledged send (at least once): the likely source of any repeats above.
        let unacknowledged = try await pipeline.workerMetric("asnp_worker_unacknowledged_events_total")
        print(
            "output events not acknowledged, kept and sent again: "
                + (unacknowledged.isEmpty
                    ? "none"
                    : unacknowledged.sorted { $0.key < $1.key }.map { "\(Int($0.value)) \($0.key)" }.joined(
                        separator: ", "
                    ))
        )
        guard lost.isEmpty else {
            // The likely cause on the mock: a backlog past what it keeps, whose oldest messages it deleted unread.
            let deleted = try await pipeline.workerMetric("asnp_worker_lost_messages_total").values.reduce(0, +)
            throw BenchFailure(
                "\(lost.count) notifications answered 200 were not stored, e.g. \(lost.sorted().prefix(3))"
                    + (deleted > 0
                        ? "; the workers counted \(Int(deleted)) raw messages the broker deleted before they were "
                            + "read (the mock keeps ~5 MB per partition)" : "")
            )
        }
        guard events >= last else {
            throw BenchFailure("\(last - events) stored notifications have no decoded event")
        }
        return rows
    }
}

extension LoadWorkload.SubscriptionOrder: ExpressibleByArgument {}
