import AppStoreTestSupport
import Foundation
import Logging
import PipelineServices
import ServiceLifecycle
import Synchronization

/// A worker built in-process by PipelineServices' `buildWorker`, from the same environment variables
/// ``WorkerProcess`` gives `asnp worker`: for tests whose subject is what a worker does, not the process (signals and
/// exit codes stay with ``WorkerProcess``).
final class InProcessWorker: Sendable {
    let role: WorkerRole
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    /// What ended the run, once it failed: a wait for the worker's work stops at once when the worker is gone.
    private let failure = RunFailure()

    /// Builds and starts a worker that migrates the schema; see ``WorkerProcess/variables(bootstrapServers:databaseURL:app:bundleID:appAppleID:rootCertificate:statusPort:extra:)``.
    static func start(
        bootstrapServers: String,
        databaseURL: String,
        app: String = "notes",
        appAppleID: Int64? = Fixtures.appAppleId,
        rootCertificate: String = Fixtures.directory.appendingPathComponent("test-root.der").path,
        statusPort: Int = 0,
        extra: [String: String] = [:]
    ) async throws -> InProcessWorker {
        let variables = WorkerProcess.variables(
            bootstrapServers: bootstrapServers,
            databaseURL: databaseURL,
            app: app,
            appAppleID: appAppleID,
            rootCertificate: rootCertificate,
            statusPort: statusPort,
            extra: extra
        )
        let settings = try await PipelineSettings.load(file: nil, environment: variables).workerRole()
        let logger = Logger.test("test.worker-role")
        return try InProcessWorker(role: buildWorker(settings, migrate: true, logger: logger), logger: logger)
    }

    private init(role: WorkerRole, logger: Logger) {
        self.role = role
        let group = role.serviceGroup(logger: logger, gracefulShutdownSignals: [])
        self.group = group
        running = Task { [failure] in
            do {
                try await group.run()
            } catch {
                failure.record(error)
                throw error
            }
        }
    }

    /// Throws what ended the run if it failed; returns while it runs (or ended by ``stop()``).
    func checkRunning() throws {
        if let error = failure.error { throw error }
    }

    /// Shuts the worker down as SIGTERM would (finish the batch, flush the outputs, close the pool) and waits for
    /// it; rethrows what ended the run if it failed.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }

    /// Cancels the run without waiting: the cleanup of a test that failed before ``stop()``.
    func cancel() {
        running.cancel()
    }
}

/// The error a run ended with, kept for a test that waits on the run's work.
private final class RunFailure: Sendable {
    private let stored = Mutex<(any Error)?>(nil)

    var error: (any Error)? { stored.withLock { $0 } }

    func record(_ error: any Error) {
        stored.withLock { $0 = error }
    }
}
