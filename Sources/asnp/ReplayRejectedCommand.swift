import ArgumentParser
import Foundation
import KafkaClient
import Logging
import NotificationStore
import PipelineReplay
import PipelineServices

/// `asnp replay rejected`: rejected notifications back onto the raw topic.
struct ReplayRejectedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rejected",
        abstract: "Replay rejected notifications (by status, time of receipt or id) onto the raw topic.",
        discussion: """
            Reads rejected_notifications (database.url), produces each V2 body with the headers it came with to \
            kafka.topics.raw (asnp-source: replay), and marks the row replayed once the broker acknowledged it. \
            Without a filter, every row not yet replayed, except rows a replay brought (a body rejected again \
            after its replay is not sent round again unless --include-replayed). V1 bodies are stored with the shared secret redacted, so \
            they cannot pass verification again from the table: they are read back from the raw topic at the \
            coordinates they were consumed from, while it still holds them (those it no longer holds are listed: \
            Apple's history has no V1 notifications). Rows without raw-topic headers (INVALID_HEADERS) are \
            skipped: nothing tells which app they were for. Prints what it did; exit 0 unless producing, reading \
            the raw topic or the database failed.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(name: .customLong("status"), help: "Only this status (repeatable), e.g. INVALID_CHAIN, UNKNOWN_APP.")
    var statuses: [String] = []

    @Option(name: .customLong("id"), help: "Only this rejected_notifications id (repeatable).")
    var ids: [Int64] = []

    @Option(help: "Only notifications received at or after this time (ISO 8601, e.g. 2026-11-20T00:00:00Z).")
    var since: String?

    @Option(help: "Only notifications received before this time (ISO 8601).")
    var until: String?

    @Flag(help: "Also rows already replayed, and rows of bodies a replay brought that were rejected again.")
    var includeReplayed = false

    @Flag(help: "Only count what would be replayed.")
    var dryRun = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .warning

    func run() async throws {
        var logger = Logger(label: "asnp.replay")
        logger.logLevel = logLevel
        var filter = RejectedNotificationFilter()
        filter.statuses = statuses
        filter.ids = ids
        filter.includeReplayed = includeReplayed
        filter.receivedSince = try since.map { try Self.date($0, option: "--since") }
        filter.receivedBefore = try until.map { try Self.date($0, option: "--until") }
        let settings = try await PipelineSettings.load(file: config)
        let cluster = try settings.kafkaCluster(clientID: "asnp-replay")
        let rawTopic = try settings.rawTopic()
        let database = try settings.database()

        let reader = try KafkaPartitionReader(cluster: cluster, logger: logger)
        let dryRun = dryRun
        let summary: RejectedReplay.Summary
        do {
            summary = try await RawTopicReplay.with(cluster: cluster, topic: rawTopic, logger: logger) { replay in
                try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
                    try await store.checkSchema()
                    return try await RejectedReplay(replay: replay, reader: reader, store: store, dryRun: dryRun)
                        .run(filter)
                }
            }
        } catch let interrupted as ReplayInterrupted<RejectedReplay.Summary> {
            print(interrupted.progress.report(topic: rawTopic, dryRun: false))
            throw interrupted.failure
        }
        print(summary.report(topic: rawTopic, dryRun: dryRun))
    }

    private static func date(_ text: String, option: String) throws -> Date {
        guard let date = try? Date(text, strategy: .iso8601) else {
            throw ValidationError("\(option) takes an ISO 8601 time such as 2026-11-20T00:00:00Z, not '\(text)'")
        }
        return date
    }
}
