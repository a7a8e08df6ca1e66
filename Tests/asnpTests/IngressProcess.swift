import AppStoreTestSupport
import AsyncHTTPClient
import ChildProcesses
import Foundation
import LoadGeneration

@testable import asnp

/// `asnp ingress` as a child process on 127.0.0.1, configured through the environment as a container would be.
enum IngressProcess {
    /// Starts an ingress for one app, "notes", its probes and `/metrics` on `statusPort`; output discarded. `extra`
    /// adds or overrides variables.
    static func start(
        bootstrapServers: String,
        port: Int,
        statusPort: Int,
        bundleID: String = Fixtures.bundleId,
        extra: [String: String] = [:]
    ) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["KAFKA_BOOTSTRAP_SERVERS"] = bootstrapServers
        environment["APPS_NAMES"] = "notes"
        environment["APPS_NOTES_BUNDLE_ID"] = bundleID
        environment["INGRESS_HOST"] = "127.0.0.1"
        environment["INGRESS_PORT"] = String(port)
        environment["INGRESS_STATUS_HOST"] = "127.0.0.1"
        environment["INGRESS_STATUS_PORT"] = String(statusPort)
        environment.merge(extra) { _, new in new }
        return try ChildProcess(
            executable: ASNPProcess.executable.path,
            arguments: ["ingress", "--log-level", "warning"],
            environment: environment
        )
    }

    /// Polls `/health/ready` on the status port until it answers 200 (true) or the process exits (false). The ingress promises no
    /// start-up time (it is ready once its producer reaches a broker with the raw topic), and a loaded run took more
    /// than the 20 s this used to allow; so no bound here but the suite's own watchdog, as for the worker.
    static func waitUntilReady(statusPort: Int, client: HTTPClient, while ingress: ChildProcess) async throws -> Bool {
        while ingress.isRunning {
            if try await ReadinessProbe.waitUntilReady(statusPort: statusPort, client: client, within: .seconds(2)) {
                return true
            }
        }
        return false
    }
}
