import ArgumentParser
import CommandSupport

/// `asnp`: the App Store Notification Pipeline command. Each subcommand parses its arguments, builds its role with
/// PipelineServices and runs it; benchmarks and load generation live in `asnp-bench`.
@main
struct ASNP: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asnp",
        abstract: "App Store Notification Pipeline: verify, store and publish App Store Server Notifications.",
        version: BuildVersion.description,
        subcommands: subcommands
    )

    /// `dev` only with the DevelopmentTools trait (the default): the image builds without it.
    private static var subcommands: [any ParsableCommand.Type] {
        var commands: [any ParsableCommand.Type] = [
            VerifyCommand.self, IngressCommand.self, WorkerCommand.self, MigrateCommand.self, ReplayCommand.self,
            StatusCommand.self, SubscriptionCommand.self, StateCommand.self, TailCommand.self, HistoryCommand.self,
            RetentionCommand.self, APICommand.self,
        ]
        #if DevelopmentTools
        commands.append(DevCommand.self)
        #endif
        commands.append(KafkaMockCommand.self)
        return commands
    }

    /// Exit codes: 0 success, 1 a rejected input (from the command itself), 2 a usage error, 3 a failed service.
    static func main() async {
        await LogFormat.bootstrap()
        await runAsRoot()
    }
}
