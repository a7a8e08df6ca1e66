import ChildProcesses
import Foundation

/// `asnp kafka-mock` started as a child process, so a measured client does not share a process with the broker.
package final class KafkaMockChild {
    private let process: ChildProcess
    /// The bootstrap servers the child printed as its first line.
    package let bootstrapServers: String

    /// Starts `executable kafka-mock arguments...` and waits for its first line.
    package init(executable: URL, arguments: [String]) throws {
        let output = try OutputPipe()
        process = try ChildProcess(
            executable: executable.path,
            arguments: ["kafka-mock"] + arguments,
            standardOutput: .pipe(output)
        )
        let line = output.readLineBlocking()
        guard let first = line.split(separator: "\n").first, !first.isEmpty else {
            process.terminate()
            throw KafkaMockChildError(status: process.waitForExit())
        }
        bootstrapServers = String(first)
    }

    package var pid: Int32 { process.processIdentifier }

    /// Sends SIGTERM and waits, off the concurrency pool.
    package func terminate() async {
        if process.isRunning { process.terminate() }
        await process.exited()
    }

    /// Sends SIGTERM and waits; returns the exit status.
    @discardableResult
    package func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        return process.waitForExit()
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
