import AppStoreModels
import AppStoreSigning
import ChildProcesses
import Foundation
import KafkaClient
import LoadGeneration
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import Synchronization

/// One chaos soak: the pipeline started (``SoakPipeline``), signed notifications posted at `rate` for `posting`
/// with Apple-style retries while ``SoakSchedule``'s faults are injected, then, once posting stopped, the pipeline
/// drained (bounded by `drainLimit`) and checked (``SoakChecks``).
struct SoakRun {
    var seed: UInt64
    var posting: Duration
    var perKind: Int
    var rate: Double
    var workers: Int
    var timeZone: String
    var rawPartitions = 16
    var outputPartitions = 8
    var drainLimit: Duration
    /// The most the resident worker's RSS may grow from the end of the warm-up to the end of the drain.
    var memoryGrowthLimit: Int
    static let bundleId = "com.example.notes"

    /// What the run did and found.
    struct Result: Sendable {
        var schedule: SoakSchedule
        /// Faults carried out, by kind; and those that could not be (with why).
        var faults: [SoakSchedule.Kind: Int] = [:]
        var faultFailures: [String] = []
        var posted = 0
        var retries = 0
        var statuses: [String: Int] = [:]
        var notifications = 0
        var duplicates = 0
        var hostileAccepted = 0
        var direct = 0
        /// The longest time without a stored or rejected row more while posting, and when it began.
        var worstStall: Duration = .zero
        var worstStallAt: Duration = .zero
        var drained: Duration = .zero
        /// When posting began: the schedule's times count from here.
        var postingStarted = Date()
        /// Whether the drain's bound passed before the pipeline had drained (the checks then say what is missing).
        var drainTimedOut = false
        var memory = Memory()
        var checks = SoakChecks.Result()
        var violations: [String] = []
    }

    /// RSS in bytes: the resident worker's at the end of the warm-up, its peak, at the end; the ingress's.
    struct Memory: Sendable {
        var residentStart = 0
        var residentPeak = 0
        var residentEnd = 0
        var ingressStart = 0
        var ingressEnd = 0
    }

    /// What the faults and the posts report while the run goes on.
    private final class Tally: Sendable {
        struct State {
            var result: Result
            var expected: SoakChecks.Expectations
            var stalls = (last: 0, since: Duration.zero)
            var posting = true

            /// Posting ended at `instant`: the stall running then counts.
            mutating func postingEnded(at instant: Duration) {
                posting = false
                if instant - stalls.since > result.worstStall {
                    result.worstStall = instant - stalls.since
                    result.worstStallAt = stalls.since
                }
            }

            /// The result with every violation: the checks', the memory bound, a kind never carried out, a process
            /// that did not exit 0 on SIGTERM at the end (`unclean`), those found while running.
            func verdict(unclean: [String], memoryGrowthLimit: Int) -> Result {
                var final = result
                final.notifications = expected.notifications.count
                final.violations = result.checks.violations + result.violations
                let memory = result.memory
                if memory.residentEnd > memory.residentStart + memoryGrowthLimit {
                    let (start, end, bound) = (
                        memory.residentStart >> 20, memory.residentEnd >> 20, memoryGrowthLimit >> 20
                    )
                    final.violations.append(
                        """
                        memory: the resident worker grew from \(start) MB after the warm-up to \(end) MB, past \
                        \(bound) MB more
                        """
                    )
                }
                for kind in SoakSchedule.Kind.allCases where result.faults[kind, default: 0] == 0 {
                    final.violations.append("faults: no \(kind.rawValue) fault was carried out")
                }
                for process in unclean { final.violations.append("shutdown: \(process) after SIGTERM") }
                return final
            }

            /// The load's report: every good body was answered 200 in the end (posts are retried until they are).
            mutating func record(_ report: LoadRun.Report, of workload: SoakWorkload) {
                result.posted += report.sent
                result.retries += report.retries
                result.statuses.merge(report.statuses) { $0 + $1 }
                for body in workload.posted {
                    if let uuid = workload.uuids[body] { expected.notifications.insert(uuid) }
                }
                for body in workload.tampered { expected.posted(hostile: body, answered: true) }
                for index in report.unanswered where workload.tampered.contains(workload.posted[index]) {
                    expected.posted(hostile: workload.posted[index], answered: false)
                }
            }
        }
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
        func update(_ body: (inout State) -> Void) { state.withLock { body(&$0) } }
        func done(_ kind: SoakSchedule.Kind) { update { $0.result.faults[kind, default: 0] += 1 } }
        func failed(_ fault: SoakSchedule.Fault, _ why: String) {
            update { $0.result.faultFailures.append("\(fault.kind.rawValue) at \(fault.start.seconds) s: \(why)") }
        }
    }

    func run(logger: Logger) async throws -> Result {
        let schedule = SoakSchedule(seed: seed, posting: posting, perKind: perKind)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-soak-\(seed)-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try TestPKI()
        let rootFile = directory.appendingPathComponent("root.der")
        try Data(try pki.rootDER()).write(to: rootFile)
        // Duplicates add a tenth and tampered copies a hundredth: `rate` is what is posted.
        let count = max(100, Int(rate * posting.seconds / 1.11))
        let workload = try SoakWorkload.make(
            count: count,
            boundaryFaults: perKind,
            bundleId: Self.bundleId,
            pki: pki,
            seed: seed
        )
        var expected = SoakChecks.Expectations(retentionCutoff: NotificationStore.retentionCutoff(keepMonths: 1))
        expected.goodBodies = Set(workload.uuids.keys.map(SoakChecks.sha256))
        var result = Result(schedule: schedule)
        result.duplicates = workload.duplicates
        let tally = Tally(Tally.State(result: result, expected: expected))

        let pipeline = try await SoakPipeline.start(
            directory: directory,
            rootFile: rootFile,
            bundleId: Self.bundleId,
            timeZone: timeZone,
            rawPartitions: rawPartitions,
            outputPartitions: outputPartitions,
            workers: workers,
            logger: logger
        )
        let output = try SoakOutputLog(cluster: pipeline.mock.clusterConfiguration, logger: logger)
        do {
            try await load(
                workload,
                schedule: schedule,
                pipeline: pipeline,
                output: output,
                tally: tally,
                logger: logger
            )
            try? await output.catchUp()
            tally.update { state in
                state.result.memory.residentEnd = ProcessStats.residentBytes(of: pipeline.resident.processIdentifier)
                state.result.memory.ingressEnd = ProcessStats.residentBytes(of: pipeline.ingress.processIdentifier)
            }
            let checked = try await SoakChecks.check(tally.state.withLock { $0.expected }, output: output.contents) {
                try await pipeline.query($0)
            }
            tally.update { $0.result.checks = checked }
        } catch {
            await pipeline.stop()
            throw error
        }
        let unclean = await pipeline.stop()
        return tally.state.withLock { $0.verdict(unclean: unclean, memoryGrowthLimit: memoryGrowthLimit) }
    }

    /// Posts the workload and injects the faults, with the producer, the output log's reader and the sampler
    /// running beside them; then waits for the drain.
    private func load(
        _ workload: SoakWorkload,
        schedule: SoakSchedule,
        pipeline: SoakPipeline,
        output: SoakOutputLog,
        tally: Tally,
        logger: Logger
    ) async throws {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(cluster: pipeline.mock.clusterConfiguration),
            logger: logger
        )
        let start = ContinuousClock.now
        tally.update { $0.result.postingStarted = Date() }
        let warmUp = schedule.window.lowerBound
        try await withThrowingTaskGroup(of: Void.self) { background in
            background.addTask { try await producer.run() }
            background.addTask { try await Self.sample(pipeline: pipeline, tally: tally, start: start, warmUp: warmUp) }
            // Stopped before the drain reads on: two passes at once would read the same ranges and record each event
            // twice. (Before the reader took turns, they also ended each other's reads: 1-2 events a run never read.)
            let follower = Task { try await Self.follow(output) }
            do {
                try await post(
                    workload,
                    schedule: schedule,
                    pipeline: pipeline,
                    producer: producer,
                    start: start,
                    tally: tally
                )
            } catch {
                follower.cancel()
                throw error
            }
            follower.cancel()
            _ = await follower.result
            let posted = start.duration(to: .now)
            tally.update { $0.postingEnded(at: posted) }
            try await drain(pipeline: pipeline, output: output, tally: tally)
            tally.update { $0.result.drained = start.duration(to: .now) - posted }
            background.cancelAll()
        }
    }

    /// Posts the workload at the rate that spreads it over the posting time while the faults start on schedule;
    /// returns once both are done.
    private func post(
        _ workload: SoakWorkload,
        schedule: SoakSchedule,
        pipeline: SoakPipeline,
        producer: KafkaProducer,
        start: ContinuousClock.Instant,
        tally: Tally
    ) async throws {
        let run = LoadRun(
            url: pipeline.url,
            connections: 8,
            rate: Double(workload.posted.count) / posting.seconds,
            retryDelay: .seconds(1)
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                let report = try await run.run(workload.posted)
                tally.update { $0.record(report, of: workload) }
            }
            var boundaryGroups = workload.direct.makeIterator()
            for fault in schedule.faults {
                try await ContinuousClock().sleep(until: start.advanced(by: fault.start))
                let bodies = fault.kind == .monthBoundary ? boundaryGroups.next() ?? [] : []
                tasks.addTask {
                    await Self.inject(
                        fault,
                        pipeline: pipeline,
                        producer: producer,
                        workload: workload,
                        boundaryBodies: bodies,
                        tally: tally
                    )
                }
            }
            try await tasks.waitForAll()
        }
    }

    /// Reads the output topics every few seconds, so the mock's retention never deletes an event before it is read.
    private static func follow(_ output: SoakOutputLog) async throws {
        while !Task.isCancelled {
            try? await output.catchUp()
            try await Task.sleep(for: .seconds(3))
        }
    }

    /// Every second while posting: rows stored or rejected (for the worst stall) and the resident worker's RSS.
    private static func sample(pipeline: SoakPipeline, tally: Tally, start: ContinuousClock.Instant, warmUp: Duration)
        async throws
    {
        var warmedUp = false
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(1))
            let now = start.duration(to: .now)
            let rows = try? await pipeline.query(
                "SELECT (SELECT count(*) FROM notifications) + (SELECT count(*) FROM rejected_notifications)"
            )
            let resident = ProcessStats.residentBytes(of: pipeline.resident.processIdentifier)
            let ingress = ProcessStats.residentBytes(of: pipeline.ingress.processIdentifier)
            tally.update { state in
                if !warmedUp, now >= warmUp {
                    state.result.memory.residentStart = resident
                    state.result.memory.ingressStart = ingress
                }
                state.result.memory.residentPeak = max(state.result.memory.residentPeak, resident)
                if let rows = rows.flatMap(Int.init), rows > state.stalls.last {
                    let stall = now - state.stalls.since
                    if stall > state.result.worstStall, state.posting {
                        state.result.worstStall = stall
                        state.result.worstStallAt = state.stalls.since
                    }
                    state.stalls = (rows, now)
                }
            }
            warmedUp = warmedUp || now >= warmUp
        }
    }

    /// Carries out one fault, counting it (or why it could not be).
    private static func inject(
        _ fault: SoakSchedule.Fault,
        pipeline: SoakPipeline,
        producer: KafkaProducer,
        workload: SoakWorkload,
        boundaryBodies: [String],
        tally: Tally
    ) async {
        do {
            switch fault.kind {
            case .workerKilled:
                guard await pipeline.endWorker(pick: fault.pick, signal: SIGKILL) != nil else {
                    return tally.failed(fault, "no worker but the resident one to kill")
                }
                try await Task.sleep(for: fault.length)
                try await pipeline.addWorker()
            case .workersScaled:
                try await pipeline.addWorker()
                try await Task.sleep(for: fault.length)
                if await pipeline.endWorker(pick: fault.pick, signal: SIGTERM) == false {
                    tally.update { $0.result.violations.append("scale-in: a worker did not exit 0 on SIGTERM") }
                }
            case .postgresRestarted:
                try await pipeline.stopPostgres(immediate: fault.pick % 2 == 0)
                try await Task.sleep(for: fault.length)
                try await pipeline.startPostgres()
            case .rawBrokerDown, .outputBrokerDown:
                let broker = fault.kind == .rawBrokerDown ? SoakPipeline.rawBroker : SoakPipeline.outputBroker
                // Not set_down: librdkafka 2.0.2's mock aborts if the port is taken meanwhile (Docs/kafka.md). A
                // round trip longer than the fault is a broker down; the output broker is slow instead on odd picks.
                let slow = fault.kind == .outputBrokerDown && fault.pick % 2 == 1
                try pipeline.mock.setRoundTripTime(
                    slow ? .milliseconds(300) : fault.length + .seconds(1),
                    broker: broker
                )
                try await Task.sleep(for: fault.length)
                try pipeline.mock.setRoundTripTime(.zero, broker: broker)
            case .monthBoundary:
                try await produce(boundaryBodies, producer: producer, tally: tally)
            case .retention:
                let status = try await pipeline.run(["retention", "--apply", "--retain-months", "1"])
                guard status == 0 else { return tally.failed(fault, "asnp retention exited \(status)") }
            case .replayRejected:
                let status = try await pipeline.run(["replay", "rejected", "--log-level", "error"])
                guard status == 0 else { return tally.failed(fault, "asnp replay rejected exited \(status)") }
            case .hostileBodies:
                try await postHostile(fault, pipeline: pipeline, workload: workload, tally: tally)
            }
            tally.done(fault.kind)
        } catch {
            tally.failed(fault, "\(error)")
        }
    }

    /// Produces `bodies` to the raw topic as the ingress would, each with the next time of receipt around a month
    /// boundary; a send that fails is sent again (it may have been written: a duplicate, deduplicated).
    private static func produce(_ bodies: [String], producer: KafkaProducer, tally: Tally) async throws {
        let instants = SoakWorkload.monthBoundaryInstants(around: Date())
        for (body, receivedAt) in zip(bodies, instants) {
            let headers = RawNotificationHeaders(
                version: 2,
                environment: .sandbox,
                app: SoakPipeline.app,
                receivedAt: receivedAt,
                requestID: "soak-\(UUID())",
                source: .ingress
            )
            try await send(headers.message(body: ByteBuffer(string: body), topic: PipelineTopics.raw), producer)
            tally.update { state in
                state.result.direct += 1
                if let uuid = LoadWorkload.notificationUUID(of: body) { state.expected.notifications.insert(uuid) }
            }
        }
    }

    /// Sends `message` until the cluster acknowledges it, 30 times at most, a second apart.
    private static func send(_ message: KafkaProducerMessage, _ producer: KafkaProducer) async throws {
        var failure: KafkaError?
        for _ in 0..<30 {
            do {
                _ = try await producer.send(message)
                return
            } catch {
                failure = error
            }
            try await Task.sleep(for: .seconds(1))
        }
        if let failure { throw failure }
    }

    /// Posts one burst of hostile bodies, each once (no retry: a refused body would be refused forever).
    private static func postHostile(
        _ fault: SoakSchedule.Fault,
        pipeline: SoakPipeline,
        workload: SoakWorkload,
        tally: Tally
    ) async throws {
        var index = Int(fault.pick % UInt64(workload.posted.count))
        while workload.tampered.contains(workload.posted[index]) { index = (index + 1) % workload.posted.count }
        let (refused, rejected) = SoakWorkload.hostileBodies(pick: fault.pick, sample: workload.posted[index])
        let post = LoadRun(url: pipeline.url, connections: 2, rate: nil, retryDelay: nil)
        let refusedReport = try await post.run(refused)
        let rejectedReport = try await post.run(rejected)
        tally.update { state in
            for body in refused {
                if refusedReport.statuses.keys.allSatisfy({ $0.hasPrefix("4") }), refusedReport.errors == 0,
                    refusedReport.ok == 0
                {
                    state.expected.refused.insert(SoakChecks.sha256(body))
                } else {
                    state.expected.posted(hostile: body, answered: refusedReport.ok > 0)
                }
            }
            let unanswered = Set(rejectedReport.unanswered)
            for (offset, body) in rejected.enumerated() {
                state.expected.posted(hostile: body, answered: !unanswered.contains(offset))
                if !unanswered.contains(offset) { state.result.hostileAccepted += 1 }
            }
        }
    }

    /// Waits until every accepted notification is stored, the outbox is empty and every stored notification's
    /// decoded event was read, for at most `drainLimit`.
    private func drain(pipeline: SoakPipeline, output: SoakOutputLog, tally: Tally) async throws {
        let deadline = ContinuousClock.now.advanced(by: drainLimit)
        defer { tally.update { $0.result.drainTimedOut = ContinuousClock.now >= deadline } }
        let expected = tally.state.withLock { $0.expected.notifications }
        while ContinuousClock.now < deadline {
            try? await output.catchUp()
            let published = Set(output.contents.decoded.values.joined().map(\.id))
            if let stored = try? await pipeline.query("SELECT notification_uuid FROM notifications"),
                let outbox = try? await pipeline.query("SELECT count(*) FROM outbox WHERE refused_at IS NULL"),
                outbox == "0"
            {
                let storedSet = Set(stored.split(separator: "\n").map(String.init))
                if expected.isSubset(of: storedSet), storedSet.isSubset(of: published) { return }
            }
            try await Task.sleep(for: .seconds(2))
        }
    }
}
