import ArgumentParser

/// `asnp history`: Apple's notification history, the reconciler's source.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Fill gaps from Apple's notification history (the reconciler).",
        subcommands: [HistorySyncCommand.self, HistoryStatusCommand.self]
    )
}
