import Foundation

/// Runs a program found on PATH to completion, returning its status and standard output; waits on a thread of its
/// own, never on the concurrency pool.
func runProgram(_ name: String, _ arguments: [String], input: Data = Data()) async throws -> (
    status: Int32, output: Data
) {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try runProgramBlocking(name, arguments, input: input) }) }.start()
    }
}

private func runProgramBlocking(_ name: String, _ arguments: [String], input: Data) throws -> (
    status: Int32, output: Data
) {
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
