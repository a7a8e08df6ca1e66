import ChildProcesses
import Foundation

/// Runs a program found on PATH (or at a path) to completion, returning its status and standard output; its
/// standard error is this process's. A program not found exits 127, as with `env`. Waits holding no thread.
func runProgram(_ name: String, _ arguments: [String], input: Data = Data()) async throws -> (
    status: Int32, output: Data
) {
    guard let executable = ChildProcess.path(of: name) else { return (127, Data()) }
    let output = try OutputPipe()
    let process = try ChildProcess(
        executable: executable,
        arguments: arguments,
        standardInput: .data(input),
        standardOutput: .pipe(output),
        standardError: .inherit
    )
    let data = await output.readToEnd()
    await process.exited()
    return (process.terminationStatus, data)
}
