import ArgumentParser
import Foundation

/// `asnp`: the App Store Notification Pipeline command.
@main
struct ASNP: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asnp",
        abstract: "App Store Notification Pipeline: verify, store and publish App Store Server Notifications.",
        subcommands: [
            VerifyCommand.self, IngressCommand.self, WorkerCommand.self, MigrateCommand.self, ReplayCommand.self,
            StatusCommand.self, SubscriptionCommand.self, HistoryCommand.self, DevCommand.self, LoadgenCommand.self,
            KafkaMockCommand.self,
            BenchCommand.self,
        ]
    )

    /// Exit codes: 0 success, 1 a rejected input (from the command itself), 2 a usage error.
    static func main() async {
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

/// The exit codes the commands use.
enum CLIExit {
    /// Every input verified.
    static let ok = ExitCode(0)
    /// At least one input was rejected.
    static let rejected = ExitCode(1)
    /// The command line or an input file could not be used.
    static let usage = ExitCode(2)
    /// A service the command needs (the database) failed or is not ready.
    static let failed = ExitCode(3)
}
