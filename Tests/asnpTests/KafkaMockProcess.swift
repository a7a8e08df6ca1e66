import Foundation

/// `asnp kafka-mock` running as its own process, as developers run it beside the ingress and workers.
final class KafkaMockProcess {
    let process = Process()
    /// The first line the command printed.
    let bootstrapServers: String

    init(_ arguments: [String]) throws {
        process.executableURL = ASNPProcess.executable
        process.arguments = ["kafka-mock"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += chunk
        }
        bootstrapServers = String(decoding: line, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    /// Sends SIGTERM and waits for the exit status.
    func stop() -> Int32 {
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Runs a program found on PATH to completion, returning its status and standard output.
func runProgram(_ name: String, _ arguments: [String], input: Data = Data()) throws -> (status: Int32, output: Data) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [name] + arguments
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    try process.run()
    stdin.fileHandleForWriting.write(input)
    try stdin.fileHandleForWriting.close()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, output)
}
