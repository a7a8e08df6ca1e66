import AppStoreTestSupport
import CommandSupport
import Foundation

@testable import asnp

/// An `asnp dev` child process on free loopback ports, trusting `root`, with the fixtures' shared secret.
struct DevUnderTest {
    let process: Process
    let httpPort: Int
    let postgresPort: Int

    static func start(in directory: URL, root: String, workers: Int = 1) async throws -> DevUnderTest {
        let httpPort = try LoopbackPort.free()
        let postgresPort = try LoopbackPort.free()
        let dev = Process()
        dev.executableURL = ASNPProcess.executable
        dev.arguments = [
            "dev", "--data-dir", directory.appendingPathComponent("data").path, "--http-port", String(httpPort),
            "--postgres-port", String(postgresPort), "--root-cert", root, "--shared-secret", Fixtures.sharedSecret,
            "--workers", String(workers), "--log-level", "error",
        ]
        let output = Pipe()
        dev.standardOutput = output
        dev.standardError = FileHandle.nullDevice
        try dev.run()
        let banner = await DevCommandTests.read(output, until: "\nready\n")
        guard banner.contains("\nready\n") else {
            dev.terminate()
            throw DevNotReady(output: banner)
        }
        return DevUnderTest(process: dev, httpPort: httpPort, postgresPort: postgresPort)
    }

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
        var description: String { "asnp dev never printed ready:\n\(output)" }
    }
}
