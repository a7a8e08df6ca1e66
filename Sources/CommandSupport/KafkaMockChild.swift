import ChildProcesses
import Foundation

/// `asnp kafka-mock` started as a child process, so a measured client does not share a process with the broker.
///
/// Starting and stopping it suspend the caller and hold no thread: tests start several at once, and a concurrency
/// pool of two threads (a 2-core machine) blocked on children stalls every other task in the process.
package final class KafkaMockChild: Sendable {
    private let process: ChildProcess
    /// The bootstrap servers the child printed as its first line.
    package let bootstrapServers: String

    private init(process: ChildProcess, bootstrapServers: String) {
        self.process = process
        self.bootstrapServers = bootstrapServers
    }

    /// Starts `executable kafka-mock arguments...` and waits for its first line.
    package static func start(executable: URL, arguments: [String]) async throws -> KafkaMockChild {
        let output = try OutputPipe()
        let process = try ChildProcess(
            executable: executable.path,
            arguments: ["kafka-mock"] + arguments,
            standardOutput: .pipe(output)
        )
        let text = await output.read(until: "\n")
        guard let first = text.split(separator: "\n").first, !first.isEmpty else {
            process.terminate()
            await process.exited()
            throw KafkaMockChildError(status: process.terminationStatus)
        }
        return KafkaMockChild(process: process, bootstrapServers: String(first))
    }

    package var pid: Int32 { process.processIdentifier }

    /// Sends SIGTERM and waits for the exit; returns the exit status.
    @discardableResult
    package func terminate() async -> Int32 {
        if process.isRunning { process.terminate() }
        await process.exited()
        return process.terminationStatus
    }

    /// Sends SIGTERM without waiting (for a `defer`); the child is reaped by a thread of its own.
    package func stop() {
        if process.isRunning { process.terminate() }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// `asnp kafka-mock` exited before printing its bootstrap servers.
package struct KafkaMockChildError: Error, CustomStringConvertible {
    package var status: Int32
    package var description: String {
        "asnp kafka-mock exited before printing its bootstrap servers (status \(status))"
    }
}
