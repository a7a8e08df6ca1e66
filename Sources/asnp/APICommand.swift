import ArgumentParser

/// `asnp api`: the read API, and its keys.
struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Answer app backends over HTTP: a customer's access, a subscription's state and notifications.",
        subcommands: [APIServeCommand.self, APIKeyCommand.self],
        defaultSubcommand: APIServeCommand.self
    )
}
