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
    /// A service the command needs (the database) failed or is not ready.
    package static let failed = ExitCode(3)
}

extension AsyncParsableCommand {
    /// Parses the command line and runs the command, exiting 0 on success, with the command's own `ExitCode`, or
    /// with ``CLIExit/usage`` and the message on standard error for anything ArgumentParser refuses.
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
