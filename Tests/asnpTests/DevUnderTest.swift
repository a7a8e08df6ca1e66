import AppStoreTestSupport
import ChildProcesses
import CommandSupport
import Foundation

@testable import asnp

/// An `asnp dev` child process on free loopback ports, trusting `roots`, with the fixtures' shared secret.
struct DevUnderTest {
    let process: ChildProcess
    let httpPort: Int
    let postgresPort: Int
    let directory: URL

    static func start(in directory: URL, root: String, workers: Int = 1) async throws -> DevUnderTest {
        try await start(in: directory, roots: [root], workers: workers)
    }

    /// - Parameter tracingEndpoint: an OTLP/HTTP endpoint (JSON) every span is exported to.
    static func start(
        in directory: URL,
        roots: [String],
        workers: Int = 1,
        tracingEndpoint: String? = nil
    ) async throws -> DevUnderTest {
        let httpPort = try LoopbackPort.free()
        let postgresPort = try LoopbackPort.free()
        let output = try OutputPipe()
        let dev = try ChildProcess(
            executable: ASNPProcess.executable.path,
            arguments: [
                "dev", "--data-dir", directory.appendingPathComponent("data").path, "--http-port", String(httpPort),
                "--postgres-port", String(postgresPort), "--api-port", String(try LoopbackPort.free()),
                "--shared-secret", Fixtures.sharedSecret,
                "--workers", String(workers), "--log-level", "error",
            ] + roots.flatMap { ["--root-cert", $0] } + (tracingEndpoint.map { ["--tracing-endpoint", $0] } ?? []),
            // swift-otel's own variable: the JSON encoding the tests' collector reads.
            environment: tracingEndpoint == nil
                ? nil
                : ProcessInfo.processInfo.environment.merging(["OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"]) { $1 },
            standardOutput: .pipe(output)
        )
        let banner = await output.read(until: "\nready\n")
        guard banner.contains("\nready\n") else {
            dev.terminate()
            await dev.exited()
            let status = dev.terminationStatus
            let ending = dev.terminationReason == .exit ? "exit status \(status)" : "signal \(status)"
            throw DevNotReady(output: banner, ending: ending)
        }
        return DevUnderTest(process: dev, httpPort: httpPort, postgresPort: postgresPort, directory: directory)
    }

    /// The settings file it wrote for commands run against it (`database.url`, `kafka.bootstrapServers`).
    var settingsFile: String { directory.appendingPathComponent("data/dev.json").path }

    /// SIGTERM, then its exit status.
    func terminate() async -> Int32 {
        process.terminate()
        await process.exited()
        return process.terminationStatus
    }

    /// Stops it if a test ended early.
    func stop() {
        if process.isRunning { process.terminate() }
    }

    struct DevNotReady: Error, CustomStringConvertible {
        var output: String
        /// How the child ended (its standard error went to the test's).
        var ending: String
        var description: String { "asnp dev never printed ready (it ended with \(ending)):\n\(output)" }
    }
}
