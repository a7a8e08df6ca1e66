import ArgumentParser
import Foundation

/// The exit codes the commands use.
package enum CLIExit {
    /// Every input verified.
    package static let ok = ExitCode(0)
    /// At least one input was rejected.
    package static let rejected = ExitCode(1)
    /// The command line or an input file could not be used.
    package static let usage = ExitCode(2)
    /// The command could not do its work: a service it needs (the database) failed or is not ready, or (asnp-bench)
    /// a measurement could not be made.
    package static let failed = ExitCode(3)
}

/// An error that says how the command ends: its message on standard error, without the usage text (the command line
/// was fine), and its own exit code.
package protocol CommandFailure: Error, CustomStringConvertible {
    var exitCode: ExitCode { get }
}

extension AsyncParsableCommand {
    /// Parses the command line and runs the command, exiting 0 on success, with the command's own `ExitCode` or
    /// ``CommandFailure``'s, or with ``CLIExit/usage`` and the message on standard error for anything else (what
    /// ArgumentParser refuses).
    package static func runAsRoot() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exitCode as ExitCode {
            Foundation.exit(exitCode.rawValue)
        } catch let failure as any CommandFailure {
            FileHandle.standardError.write(Data("Error: \(failure)\n".utf8))
            Foundation.exit(failure.exitCode.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            FileHandle.standardError.write(Data("\(fullMessage(for: error))\n".utf8))
            Foundation.exit(CLIExit.usage.rawValue)
        }
    }
}
