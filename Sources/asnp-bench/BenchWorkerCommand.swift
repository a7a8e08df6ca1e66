import ArgumentParser
import CommandSupport
import Foundation
import KafkaClient
import LoadGeneration
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import PostgresRuntime

/// `asnp-bench worker`: an `asnp worker` process taking notifications from Kafka into PostgreSQL, side by side with
/// `asnp verify --jsonl` on the same notifications, in the same run.
struct BenchWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Measure an asnp worker (Kafka to committed PostgreSQL rows) against pure verification.",
        discussion: """
            Generates --count realistic signed V2 subscription notifications (six per subscription, a test PKI \
            shaped like Apple's), then, on the same bodies: (1) `asnp verify --jsonl` as a child process, the CPU \
            floor; (2) an `asnp worker` child process consuming them from librdkafka's mock cluster (in this \
            process, --partitions raw partitions) into a scratch database on the server of --database-url \
            (dropped afterwards). The producer stays at most --window messages ahead of the worker's committed \
            offsets, and waits while any partition holds more than half of what the mock keeps (~5 MB a \
            partition) uncommitted; the run fails if the database does not end with every notification. \
            Reports notifications/s (to committed rows) and the worker's RSS over the run. \
            With --output-outage-seconds, the output topics are on a second broker that stops answering (a round \
            trip as long as the outage) from --output-outage-start-seconds after the first commit: the report then \
            compares the rate of committed rows before, during and after the outage, and the run fails unless every \
            decoded event is published afterwards.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "How many distinct notifications to generate.")
    var count = 100_000

    @Option(help: "Partitions of the raw topic in the mock cluster.")
    var partitions = 64

    // With 20,000 over 64 partitions, the busiest partition of a 300,000-body run passed the mock's ~5 MB and lost
    // messages (the workload's keys do not spread evenly); the busiest partition is now bounded on its own as well.
    @Option(help: "The most messages produced and not yet committed by the worker.")
    var window = 10_000

    @Option(help: "The worker's batch size (worker.batchSize).")
    var batchSize = 1_000

    @Option(help: "Seconds the output topics' broker answers nothing during the run (0: no outage).")
    var outputOutageSeconds = 0

    @Option(help: "Seconds after the worker's first commit the output outage starts.")
    var outputOutageStartSeconds = 10

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    func validate() throws {
        guard count > 0, partitions > 0, window > 0, batchSize > 0 else {
            throw ValidationError("--count, --partitions, --window and --batch-size must be positive")
        }
        guard outputOutageSeconds >= 0, outputOutageStartSeconds >= 0 else {
            throw ValidationError("--output-outage-seconds and --output-outage-start-seconds must not be negative")
        }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.bench.worker", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        let databaseConfiguration = try database.configuration()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        Self.note("generating \(count) signed notifications...")
        let workload = try VerifyWorkload(count: count, chains: 1)
        let rootFile = directory.appendingPathComponent("root.der")
        try Data(workload.rootDERs[0]).write(to: rootFile)
        let input = directory.appendingPathComponent("bodies.jsonl")
        try workload.writeJSONLines(to: input)

        Self.note("asnp verify --jsonl...")
        let verification = try Self.timeVerification(input: input, root: rootFile)

        let (run, stored) = try await ScratchDatabase.with(
            on: databaseConfiguration,
            prefix: "asnp_bench_worker",
            logger: logger
        ) { scratch in
            try await NotificationStore.withRunning(configuration: scratch, logger: logger) {
                _ = try await $0.migrate()
            }

            Self.note("asnp worker...")
            let run = try await WorkerRun(
                bodies: workload.bodies,
                databaseURL: try Self.url(configuration: database, database: scratch.database),
                rootFile: rootFile,
                partitions: partitions,
                window: window,
                batchSize: batchSize,
                outputOutage: outputOutageSeconds > 0
                    ? WorkerRun.OutputOutage(
                        start: .seconds(outputOutageStartSeconds),
                        duration: .seconds(outputOutageSeconds)
                    ) : nil,
                logger: logger
            ).measure()

            let stored = try await NotificationStore.withRunning(configuration: scratch, logger: logger) { store in
                (
                    notifications: Int(try await store.execute("SELECT count(*)::text FROM notifications")[0]) ?? 0,
                    rejected: Int(try await store.execute("SELECT count(*)::text FROM rejected_notifications")[0])
                        ?? 0
                )
            }
            return (run, stored)
        }
        guard stored.notifications == count, stored.rejected == 0 else {
            throw BenchFailure(
                "the worker stored \(stored.notifications) of \(count) notifications (\(stored.rejected) rejected)"
            )
        }

        let cores = ProcessInfo.processInfo.activeProcessorCount
        let rows = [
            BenchmarkRow(
                implementation: "asnp verify --jsonl",
                cores: cores,
                notifications: count,
                seconds: verification.seconds
            ),
            BenchmarkRow(
                implementation: "asnp worker to PostgreSQL",
                cores: cores,
                notifications: run.notifications,
                seconds: run.elapsed.seconds
            ),
        ]
        BenchmarkReport(
            title: "\(count) V2 notifications, \(partitions) raw partitions, worker batches of \(batchSize); mock "
                + "cluster, PostgreSQL and the worker on the same \(cores) cores",
            rows: rows,
            reference: rows[0]
        ).print(json: json)
        if let published = run.published {
            for phase in run.phases {
                print(
                    String(
                        format: "%@: %.0f s, %d notifications committed, %.0f/s (%.2f× the rate before the outage)",
                        phase.name,
                        phase.elapsed.seconds,
                        phase.notifications,
                        phase.rate,
                        phase.rate / max(run.phases[0].rate, 0.001)
                    )
                )
            }
            let afterLastCommit = String(format: "%.0f", published.afterLastCommit.seconds)
            print(
                "decoded events published: \(published.events) for \(count) notifications, the last "
                    + "\(afterLastCommit) s after the last commit"
            )
            guard published.events >= count else {
                throw BenchFailure("\(count - published.events) decoded events were not published after the outage")
            }
        }
        if !json {
            print(run.memoryReport(total: count))
            print(run.commitReport)
            // The machine-wide ratio above charges the worker for PostgreSQL and the broker sharing its cores, which
            // verification alone never does; per CPU-second of the measured process compares the work itself.
            let verificationRate = Double(count) / max(verification.cpuSeconds, 0.001)
            let workerRate = Double(run.notifications) / max(run.workerCPUSeconds, 0.001)
            print(
                """
                per CPU-second of the measured process: asnp verify --jsonl \(Int(verificationRate.rounded())), \
                asnp worker \(Int(workerRate.rounded())): \(String(format: "%.2f", workerRate / verificationRate))×
                """
            )
        }
    }

    /// Runs `asnp verify --jsonl` on the bodies; its wall time and CPU time (user + system).
    static func timeVerification(
        input: URL,
        root: URL,
        bundleId: String = VerifyWorkload.bundleId
    ) throws -> (seconds: Double, cpuSeconds: Double) {
        let process = Process()
        process.executableURL = try ASNPBench.pipelineExecutable()
        process.arguments = [
            "verify", "--jsonl", "--root-cert", root.path, "--bundle-id", bundleId, "--environment", "Sandbox",
        ]
        process.standardInput = try FileHandle(forReadingFrom: input)
        process.standardOutput = FileHandle.nullDevice
        let cpuBefore = childrenCPUSeconds()
        let start = ContinuousClock.now
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure("asnp verify --jsonl failed (exit \(process.terminationStatus))")
        }
        return ((ContinuousClock.now - start).seconds, childrenCPUSeconds() - cpuBefore)
    }

    /// User + system CPU seconds of the child processes waited for so far.
    private static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The given database URL with `name` as the database (host, credentials and options kept).
    static func url(configuration database: DatabaseOptions, database name: String) throws -> String {
        let given = database.databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""
        guard var components = URLComponents(string: given) else {
            throw ValidationError("cannot read the database URL")
        }
        components.path = "/" + name
        guard let url = components.string else { throw ValidationError("cannot build the worker's database URL") }
        return url
    }

    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
