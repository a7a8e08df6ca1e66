import ArgumentParser

/// `asnp replay`: put notifications back on the raw topic for the workers to verify again.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Put notifications back on the raw topic for the workers to verify again.",
        discussion: """
            After fixing what made notifications fail (a root certificate, an app's settings), replay them: \
            `replay rejected` takes them from rejected_notifications, `replay offsets` from the raw topic itself. \
            Replaying is safe to repeat: the workers store each notification once (by notificationUUID), and a \
            rejected row is replayed once unless --include-replayed.
            """,
        subcommands: [ReplayRejectedCommand.self, ReplayOffsetsCommand.self]
    )
}
