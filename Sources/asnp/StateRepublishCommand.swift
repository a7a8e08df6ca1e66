import ArgumentParser
import CommandSupport
import Foundation
import Logging
import NotificationStore
import PipelineServices

/// `asnp state republish`: re-seed the compacted state topic from `subscriptions`.
struct StateRepublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "republish",
        abstract: "Publish every subscription's current state (or some) to the state topic again.",
        discussion: """
            Re-seeds the compacted state topic (kafka.topics.subscriptionState) from PostgreSQL (database.url): \
            after the topic was lost or recreated, or for a consumer that needs every state. Queues one state \
            event per subscription in the outbox; the running workers publish them, each the row as it is when \
            sent, so a republished state never lands after a newer one. Prints how many it queued; with --wait, \
            waits until the workers have published them. Exit 0 when queued (and, with --wait, published), 1 when \
            --wait ran out of time, 3 if the database cannot be used.
            """
    )

    @Option(name: .customLong("key"), help: "Only this originalTransactionId (repeatable); all subscriptions without.")
    var keys: [String] = []

    @Flag(help: "Wait until the workers have published every queued state.")
    var wait = false

    @Option(help: "With --wait, how long to wait, in seconds.")
    var timeout: Int = 600

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.state")
        logger.logLevel = .error
        let settings = try await PipelineSettings.load(file: config)
        let database = try settings.database()
        let keys = keys.isEmpty ? nil : keys
        let (wait, timeout) = (wait, timeout)
        let unpublished = try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
            try await store.checkSchema()
            let queued = try await store.republishStates(keys: keys)
            print("queued \(queued.count) subscription state(s); the workers publish them to the state topic")
            guard wait else { return 0 }
            let deadline = ContinuousClock.now.advanced(by: .seconds(timeout))
            var left = try await store.unpublishedStates(of: queued)
            while left > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(500))
                left = try await store.unpublishedStates(of: queued)
            }
            if left == 0 { print("published \(queued.count) subscription state(s)") }
            return left
        }
        if unpublished > 0 {
            FileHandle.standardError.write(
                Data("\(unpublished) state(s) still unpublished after \(timeout) s: are the workers running?\n".utf8)
            )
            throw CLIExit.rejected
        }
    }
}
