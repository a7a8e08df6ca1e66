import ArgumentParser

/// `asnp state`: the subscription state topic as a whole.
struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Work on the subscription state topic as a whole.",
        subcommands: [StateRepublishCommand.self]
    )
}
