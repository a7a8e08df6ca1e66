import AppStoreModels
import AppStoreTestSupport
import AsyncHTTPClient
import ChildProcesses
import Foundation
import KafkaClient
import Logging
import NIOCore
import NIOHTTP1
import PipelineContract
import Testing

@testable import asnp

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
        extra: [String: String] = [:],
        standardError: ChildProcess.Output = .null
    ) throws -> ChildProcess {
        try ChildProcess(
            executable: ASNPProcess.executable.path,
            arguments: ["worker"] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(
                variables(
                    bootstrapServers: bootstrapServers,
                    databaseURL: databaseURL,
                    app: app,
                    bundleID: bundleID,
                    appAppleID: appAppleID,
                    rootCertificate: rootCertificate,
                    statusPort: statusPort,
                    extra: extra
                )
            ) { _, new in new },
            standardError: standardError
        )
    }

    /// Polls the worker's `/health/ready` until it answers 200 (true) or the process exits (false). The worker
    /// promises no start-up time, so there is no bound here but the suite's own watchdog.
    static func waitUntilReady(statusPort: Int, while worker: ChildProcess) async throws -> Bool {
        while worker.isRunning {
            let reply = try? await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(statusPort)/health/ready"),
                timeout: .seconds(5)
            )
            if reply?.status == .ok { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// The worker's settings as environment variables, as a container would get them.
    static func variables(
        bootstrapServers: String,
        databaseURL: String,
        app: String = "notes",
        bundleID: String = Fixtures.bundleId,
        appAppleID: Int64? = Fixtures.appAppleId,
        rootCertificate: String = Fixtures.directory.appendingPathComponent("test-root.der").path,
        statusPort: Int = 0,
        extra: [String: String] = [:]
    ) -> [String: String] {
        var variables = [
            "KAFKA_BOOTSTRAP_SERVERS": bootstrapServers,
            "APPS_NAMES": app,
            "APPS_\(app.uppercased())_BUNDLE_ID": bundleID,
            "APPS_\(app.uppercased())_SHARED_SECRETS": Fixtures.sharedSecret,
            "DATABASE_URL": databaseURL,
            "WORKER_ROOT_CERTIFICATES": rootCertificate,
            "WORKER_STATUS_HOST": "127.0.0.1",
            "WORKER_STATUS_PORT": String(statusPort),
            "WORKER_SESSION_TIMEOUT_SECONDS": "6",
            "WORKER_HEARTBEAT_INTERVAL_SECONDS": "0.5",
            // As TestPostgresServer's settings: a full run on a busy 2-core CI machine saw a migration that takes
            // 0.2 s alone pass the default 30 s.
            "DATABASE_TIMEOUT_SECONDS": "60",
        ]
        variables["APPS_\(app.uppercased())_APP_APPLE_ID"] = appAppleID.map(String.init)
        variables.merge(extra) { _, new in new }
        return variables
    }

    /// Produces bodies of `version` for app "notes" (Sandbox) to the raw topic as the ingress would, expecting every
    /// one acknowledged.
    static func produce(_ bodies: [String], version: Int = 2, bootstrapServers: String, topic: String) async throws {
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
            let headers = RawNotificationHeaders(
                version: version,
                environment: .sandbox,
                app: "notes",
                receivedAt: Date(),
                requestID: UUID().uuidString,
                source: .ingress
            )
            let messages = bodies.map { headers.message(body: ByteBuffer(string: $0), topic: topic) }
            let reports = await producer.send(contentsOf: messages)
            #expect(reports.allSatisfy { (try? $0.get()) != nil })
            tasks.cancelAll()
        }
    }
}
