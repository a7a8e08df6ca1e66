import AppStoreTestSupport
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

    /// Runs `asnp arguments...` to its exit on a thread of its own: waiting on the concurrency pool would hold one
    /// of its two threads (on 2 cores) for as long as the command runs, and stall the tests running beside it.
    static func run(
        _ arguments: [String],
        standardInput: Data = Data(),
        environment: [String: String] = [:],
        executable: URL = executable
    ) async throws -> ASNPProcess {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try runBlocking(
                            arguments,
                            standardInput: standardInput,
                            environment: environment,
                            executable: executable
                        )
                    }
                )
            }
            .start()
        }
    }

    /// Runs `asnp-bench arguments...` to its exit, as ``run(_:standardInput:executable:)``.
    static func runBench(_ arguments: [String]) async throws -> ASNPProcess {
        try await run(arguments, executable: benchExecutable)
    }

    private static func runBlocking(
        _ arguments: [String],
        standardInput: Data,
        environment: [String: String] = [:],
        executable: URL
    ) throws -> ASNPProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Write and read concurrently so large inputs and outputs cannot deadlock on full pipes.
        let writer = Thread {
            input.fileHandleForWriting.write(standardInput)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let errorData = LockedData()
        let errorReader = Thread { errorData.set(error.fileHandleForReading.readDataToEndOfFile()) }
        errorReader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { Thread.sleep(forTimeInterval: 0.005) }
        return ASNPProcess(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData.value, as: UTF8.self)
        )
    }
}

/// A value handed from a reader thread.
private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?

    func set(_ value: Data) {
        lock.withLock { data = value }
    }

    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data { lock.withLock { data ?? Data() } }
}
