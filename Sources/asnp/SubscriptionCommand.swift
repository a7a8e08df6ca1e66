import ArgumentParser

/// `asnp subscription`: one subscription as the pipeline knows it.
struct SubscriptionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscription",
        abstract: "Look at one subscription's state and notifications.",
        subcommands: [SubscriptionShowCommand.self]
    )
}
