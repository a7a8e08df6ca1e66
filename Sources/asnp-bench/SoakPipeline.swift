import AsyncHTTPClient
import ChildProcesses
import Foundation
import KafkaClient
import LoadGeneration
import LocalPostgres
import Logging
import PipelineContract
import Synchronization

/// The pipeline `asnp-bench soak` runs and hurts, every part where a fault can reach it: librdkafka's mock cluster in
/// this process (three brokers: the raw topic led by one, the output topics by another, the group coordinator on
/// the third, so each can go down alone), a PostgreSQL server of its own in a temporary directory (stopped and
/// started again on the same data directory and port, with its `timezone` setting; durable, fsync and synchronous
/// commits on, as in production: without them an immediate stop loses transactions PostgreSQL had acknowledged,
/// which the first runs showed as notifications published and then gone), `asnp ingress` and `asnp
/// worker`s as child processes configured through their environment. One worker, the resident, is never killed,
/// so its memory over the whole soak says whether anything grows.
actor SoakPipeline {
    static let app = "notes"
    static let database = "asnp_soak"
    static let rawBroker: Int32 = 1
    static let outputBroker: Int32 = 2
    static let coordinatorBroker: Int32 = 3

    let mock: KafkaMockCluster
    let postgres: LocalPostgresServer
    /// The server settings PostgreSQL is started with every time (its time zone among them).
    let postgresSettings: [String: String]
    let ingress: ChildProcess
    let resident: ChildProcess
    /// Where the ingress takes V2 notifications.
    let url: String
    /// The variables every `asnp` child gets (Kafka, the app, the database).
    let environment: [String: String]
    /// The workers other than the resident one, oldest first.
    private var others: [ChildProcess] = []
    private let rootFile: URL

    private init(
        mock: KafkaMockCluster,
        postgres: LocalPostgresServer,
        postgresSettings: [String: String],
        ingress: ChildProcess,
        resident: ChildProcess,
        url: String,
        environment: [String: String],
        rootFile: URL
    ) {
        self.mock = mock
        self.postgres = postgres
        self.postgresSettings = postgresSettings
        self.ingress = ingress
        self.resident = resident
        self.url = url
        self.environment = environment
        self.rootFile = rootFile
    }

    var databaseURL: String { environment["DATABASE_URL"]! }

    /// PostgreSQL in `directory` (in `timeZone`), the mock cluster, the migrations, the ingress and `workers`
    /// workers (the resident one among them); returns once the ingress is ready.
    static func start(
        directory: URL,
        rootFile: URL,
        bundleId: String,
        timeZone: String,
        rawPartitions: Int,
        outputPartitions: Int,
        workers: Int,
        logger: Logger
    ) async throws -> SoakPipeline {
        let ports = Array((20_000...32_000).shuffled().prefix(3))
        let postgres = LocalPostgresServer(directory: directory.appendingPathComponent("postgres").path, port: ports[0])
        let settings = ["timezone": timeZone]
        try await LocalPostgresServer.offPool {
            try postgres.initialize()
            try postgres.start(durable: true, settings: settings)
            try postgres.createDatabaseIfMissing(database)
        }
        do {
            return try await startProcesses(
                postgres: postgres,
                settings: settings,
                rootFile: rootFile,
                bundleId: bundleId,
                ingressPort: ports[1],
                ingressStatusPort: ports[2],
                rawPartitions: rawPartitions,
                outputPartitions: outputPartitions,
                workers: workers,
                logger: logger
            )
        } catch {
            try? await LocalPostgresServer.offPool { try postgres.stop() }
            throw error
        }
    }

    private static func startProcesses(
        postgres: LocalPostgresServer,
        settings: [String: String],
        rootFile: URL,
        bundleId: String,
        ingressPort: Int,
        ingressStatusPort: Int,
        rawPartitions: Int,
        outputPartitions: Int,
        workers: Int,
        logger: Logger
    ) async throws -> SoakPipeline {
        let mock = try KafkaMockCluster(brokers: 3, logger: logger)
        try mock.createTopic(PipelineTopics.raw, partitions: rawPartitions)
        for topic in PipelineTopics.outputs { try mock.createTopic(topic, partitions: outputPartitions) }
        try mock.setGroupCoordinator("asnp-workers", broker: coordinatorBroker)
        for partition in 0..<Int32(rawPartitions) {
            try mock.setPartitionLeader(topic: PipelineTopics.raw, partition: partition, broker: rawBroker)
        }
        for topic in PipelineTopics.outputs {
            for partition in 0..<Int32(outputPartitions) {
                try mock.setPartitionLeader(topic: topic, partition: partition, broker: outputBroker)
            }
        }
        // As the fault tests: short group timings, so a killed member's partitions move within seconds, and a
        // database deadline a busy 2-core machine does not pass by accident.
        let variables: [String: String] = [
            "KAFKA_BOOTSTRAP_SERVERS": mock.bootstrapServers, "APPS_NAMES": app,
            "APPS_\(app.uppercased())_BUNDLE_ID": bundleId,
            "DATABASE_URL": "postgres://postgres@127.0.0.1:\(postgres.port)/\(database)",
            "WORKER_ROOT_CERTIFICATES": rootFile.path, "WORKER_STATUS_HOST": "127.0.0.1", "WORKER_STATUS_PORT": "0",
            "WORKER_SESSION_TIMEOUT_SECONDS": "6", "WORKER_HEARTBEAT_INTERVAL_SECONDS": "0.5",
            "DATABASE_TIMEOUT_SECONDS": "60",
        ]
        let environment = ProcessInfo.processInfo.environment.merging(variables) { _, new in new }
        let executable = try ASNPBench.pipelineExecutable().path
        let migrateError = try OutputPipe()
        let migrate = try ChildProcess(
            executable: executable,
            arguments: ["migrate", "--log-level", "error"],
            environment: environment,
            standardError: .pipe(migrateError)
        )
        let said = String(decoding: await migrateError.readToEnd(), as: UTF8.self)
        await migrate.exited()
        guard migrate.terminationStatus == 0 else {
            throw BenchFailure(
                "asnp migrate failed (status \(migrate.terminationStatus)) in PostgreSQL's \(settings): \(said)"
            )
        }
        let ingressVariables: [String: String] = [
            "INGRESS_HOST": "127.0.0.1", "INGRESS_PORT": String(ingressPort), "INGRESS_EVENT_LOOP_THREADS": "1",
            "INGRESS_ACK_TIMEOUT_SECONDS": "1", "INGRESS_STATUS_HOST": "127.0.0.1",
            "INGRESS_STATUS_PORT": String(ingressStatusPort),
        ]
        let ingressLog = Self.log("ingress")
        let ingress = try ChildProcess(
            executable: executable,
            arguments: ["ingress"] + ingressLog.arguments,
            environment: environment.merging(ingressVariables) { _, new in new },
            standardOutput: ingressLog.output,
            standardError: ingressLog.output
        )
        let pipeline = SoakPipeline(
            mock: mock,
            postgres: postgres,
            postgresSettings: settings,
            ingress: ingress,
            resident: try Self.worker(environment: environment),
            url: "http://127.0.0.1:\(ingressPort)/v2/notifications/sandbox",
            environment: environment,
            rootFile: rootFile
        )
        for _ in 1..<max(1, workers) { try await pipeline.addWorker() }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let ready = try await ReadinessProbe.waitUntilReady(
            statusPort: ingressStatusPort,
            client: client,
            within: .seconds(60)
        )
        try await client.shutdown()
        guard ready else {
            await pipeline.stop()
            throw BenchFailure("asnp ingress was not ready within 60 seconds")
        }
        return pipeline
    }

    private static func worker(environment: [String: String]) throws -> ChildProcess {
        let log = Self.log("worker")
        return try ChildProcess(
            executable: try ASNPBench.pipelineExecutable().path,
            arguments: ["worker"] + log.arguments,
            environment: environment,
            standardOutput: log.output,
            standardError: log.output
        )
    }

    /// Where the pipeline's processes write their logs, at debug (each notification verified, each batch, claim
    /// and rebalance), when `ASNP_SOAK_LOG_DIR` names a directory: to trace a violation. Else they log errors only,
    /// and their output is dropped.
    static let logDirectory = ProcessInfo.processInfo.environment["ASNP_SOAK_LOG_DIR"]

    private static let logsStarted = Mutex(0)

    /// The log-level arguments and output of the next process of `role`: `<role>-<n>.log` in ``logDirectory``.
    private static func log(_ role: String) -> (arguments: [String], output: ChildProcess.Output) {
        guard let logDirectory else { return (["--log-level", "error"], .null) }
        let number = logsStarted.withLock {
            $0 += 1
            return $0
        }
        return (["--log-level", "debug"], .file("\(logDirectory)/\(role)-\(number).log"))
    }

    /// Workers running now, the resident one included.
    var workerCount: Int { 1 + others.count }

    /// Starts another worker.
    func addWorker() throws {
        others.append(try Self.worker(environment: environment))
    }

    /// Ends a worker other than the resident one, chosen by `pick`, with `signal`, and waits for it to exit; nil
    /// when there is none, else whether it exited with status 0.
    func endWorker(pick: UInt64, signal: Int32) async -> Bool? {
        guard !others.isEmpty else { return nil }
        let victim = others.remove(at: Int(pick % UInt64(others.count)))
        victim.terminate(signal)
        await victim.exited()
        return victim.terminationReason == .exit && victim.terminationStatus == 0
    }

    /// Stops PostgreSQL (`immediate`: as a crash would, else closing connections cleanly).
    func stopPostgres(immediate: Bool) async throws {
        let postgres = postgres
        try await LocalPostgresServer.offPool { try postgres.stop(mode: immediate ? "immediate" : "fast") }
    }

    /// Starts PostgreSQL again on the same data directory, port and settings.
    func startPostgres() async throws {
        let (postgres, settings) = (postgres, postgresSettings)
        try await LocalPostgresServer.offPool { try postgres.start(durable: true, settings: settings) }
    }

    /// Runs `asnp arguments...` with the pipeline's environment to its end; its exit status.
    func run(_ arguments: [String]) async throws -> Int32 {
        let process = try ChildProcess(
            executable: try ASNPBench.pipelineExecutable().path,
            arguments: arguments,
            environment: environment
        )
        await process.exited()
        return process.terminationStatus
    }

    /// Runs SQL through `psql` on the soak's database (off the concurrency pool).
    nonisolated func query(_ sql: String) async throws -> String {
        let postgres = postgres
        return try await LocalPostgresServer.offPool { try postgres.psql(Self.database, sql) }
    }

    /// The processes' ids, for their memory.
    var workerProcesses: [ChildProcess] { [resident] + others }

    /// SIGTERM to the ingress and the workers, then PostgreSQL stopped; the exit statuses of those that did not exit
    /// cleanly (0), by role.
    @discardableResult
    func stop() async -> [String] {
        var unclean: [String] = []
        var processes: [(role: String, process: ChildProcess)] = [("ingress", ingress)]
        for worker in workerProcesses { processes.append(("worker", worker)) }
        for (role, process) in processes {
            if process.isRunning { process.terminate() }
            await process.exited()
            if process.terminationReason != .exit || process.terminationStatus != 0 {
                unclean.append("\(role) \(process.processIdentifier): status \(process.terminationStatus)")
            }
        }
        others = []
        let postgres = postgres
        try? await LocalPostgresServer.offPool { try postgres.stop() }
        return unclean
    }
}
