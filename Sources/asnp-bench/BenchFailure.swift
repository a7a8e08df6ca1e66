import ArgumentParser
import CommandSupport

/// A measurement that could not be made, or whose figure would be wrong (a message lost, a tool missing, a process
/// that died): the bench stops and says why, exiting 3 (``CLIExit/failed``) without the usage text that a
/// `ValidationError` brings — the command line was fine.
struct BenchFailure: CommandFailure {
    var description: String
    var exitCode: ExitCode { CLIExit.failed }

    init(_ description: String) {
        self.description = description
    }
}
