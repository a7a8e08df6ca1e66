import AppStoreTestSupport
import Foundation

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
}
