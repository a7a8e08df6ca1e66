import AppStoreTestSupport
import Foundation
import KafkaClient
import Logging
import Testing

@testable import asnp
@testable import asnp_bench

/// `asnp worker` as a child process, configured through the environment as a container would be.
enum WorkerProcess {
    /// Starts a worker for one app; status endpoints on 127.0.0.1 (`statusPort`, 0: any), short group timings so a
    /// killed member's partitions move within seconds; output discarded. `extra` adds or overrides variables.
    static func start(
        bootstrapServers: String,
        databaseURL: String,
        app: String = "notes",
        bundleID: String = Fixtures.bundleId,
        appAppleID: Int64? = Fixtures.appAppleId,
        rootCertificate: String = Fixtures.directory.appendingPathComponent("test-root.der").path,
        statusPort: Int = 0,
        arguments: [String] = ["--migrate", "--log-level", "error"],
        extra: [String: String] = [:]
    ) throws -> Process {
        let worker = Process()
        worker.executableURL = ASNPProcess.executable
        worker.arguments = ["worker"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["KAFKA_BOOTSTRAP_SERVERS"] = bootstrapServers
        environment["APPS_NAMES"] = app
        environment["APPS_\(app.uppercased())_BUNDLE_ID"] = bundleID
        environment["APPS_\(app.uppercased())_APP_APPLE_ID"] = appAppleID.map(String.init)
        environment["DATABASE_URL"] = databaseURL
        environment["WORKER_ROOT_CERTIFICATES"] = rootCertificate
        environment["WORKER_STATUS_HOST"] = "127.0.0.1"
        environment["WORKER_STATUS_PORT"] = String(statusPort)
        environment["WORKER_SESSION_TIMEOUT_SECONDS"] = "6"
        environment["WORKER_HEARTBEAT_INTERVAL_SECONDS"] = "0.5"
        environment.merge(extra) { _, new in new }
        worker.environment = environment
        worker.standardOutput = FileHandle.nullDevice
        worker.standardError = FileHandle.nullDevice
        try worker.run()
        return worker
    }

    /// Produces V2 bodies for app "notes" to the raw topic as the ingress would, expecting every one acknowledged.
    static func produce(_ bodies: [String], bootstrapServers: String, topic: String) async throws {
        var logger = Logger(label: "test.raw-topic")
        logger.logLevel = .critical
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                cluster: KafkaClusterConfiguration(bootstrapServers: bootstrapServers)
            ),
            logger: logger
        )
        await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await producer.run() }
            let messages = bodies.map { WorkerRun.rawMessage(body: Data($0.utf8), app: "notes", topic: topic) }
            let reports = await producer.send(contentsOf: messages)
            #expect(reports.allSatisfy { (try? $0.get()) != nil })
            tasks.cancelAll()
        }
    }
}
