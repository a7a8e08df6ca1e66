import AppStoreTestSupport
import ChildProcesses
import Foundation

/// Runs the built `asnp` (or `asnp-bench`) binary, as a user would.
struct ASNPProcess {
    var status: Int32
    var standardOutput: String
    var standardError: String

    /// Each output line parsed as a JSON object.
    var jsonLines: [[String: Any]] {
        standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The `asnp` binary SwiftPM built beside the test bundle.
    static var executable: URL { built("asnp") }

    /// The `asnp-bench` binary SwiftPM built beside the test bundle.
    static var benchExecutable: URL { built("asnp-bench") }

    private static func built(_ name: String) -> URL {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            bundleDirectory.appendingPathComponent(name),
            Fixtures.packageRoot.appendingPathComponent(".build/debug/\(name)"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[1]
    }

    /// Runs `asnp arguments...` to its exit; waits holding no thread (on 2 cores the concurrency pool has two, and
    /// the tests running beside it need them).
    static func run(
        _ arguments: [String],
        standardInput: Data = Data(),
        environment: [String: String] = [:],
        executable: URL = executable
    ) async throws -> ASNPProcess {
        // Its input is written, and its output and error read, as it runs: large ones cannot deadlock on full pipes.
        let output = try OutputPipe()
        let error = try OutputPipe()
        let process = try ChildProcess(
            executable: executable.path,
            arguments: arguments,
            environment: environment.isEmpty
                ? nil : ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            standardInput: .data(standardInput),
            standardOutput: .pipe(output),
            standardError: .pipe(error)
        )
        let outputData = await output.readToEnd()
        let errorData = await error.readToEnd()
        await process.exited()
        return ASNPProcess(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self)
        )
    }

    /// Runs `asnp-bench arguments...` to its exit, as ``run(_:standardInput:environment:executable:)``.
    static func runBench(_ arguments: [String]) async throws -> ASNPProcess {
        try await run(arguments, executable: benchExecutable)
    }
}
