import ArgumentParser
import Foundation
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
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

        var summary = Summary()
        let reader = try KafkaPartitionReader(cluster: cluster, logger: logger)
        try await RawTopicReplay.with(cluster: cluster, topic: rawTopic, logger: logger) { replay in
            try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
                try await store.checkSchema()
                var lastID: Int64 = 0
                while true {
                    let rows = try await store.rejectedNotifications(filter, afterID: lastID, limit: 500)
                    guard let last = rows.last else { break }
                    lastID = last.id
                    try await replayPage(rows, with: replay, reader: reader, store: store, summary: &summary)
                }
            }
        }
        print(summary.report(topic: rawTopic, dryRun: dryRun))
    }

    private func replayPage(
        _ rows: [RejectedNotification],
        with replay: RawTopicReplay,
        reader: KafkaPartitionReader,
        store: NotificationStore,
        summary: inout Summary
    ) async throws {
        var replayable: [(row: RejectedNotification, message: KafkaProducerMessage)] = []
        for row in rows {
            guard let headers = try? RawNotificationHeaders(fields: row.headers) else {
                summary.withoutHeaders += 1
                continue
            }
            guard headers.version == 2 else {
                // The stored V1 body has its password redacted: the raw topic has it as Apple sent it.
                if let original = try await Self.consumedMessage(at: row.source, reader: reader) {
                    replayable.append((row, replay.message(copying: original)))
                } else {
                    summary.version1Gone.append(row.source)
                }
                continue
            }
            replayable.append((row, replay.message(body: row.body, headers: headers)))
        }
        if dryRun {
            for entry in replayable { summary.replayed[entry.row.status, default: 0] += 1 }
            return
        }
        let (acknowledged, failure) = await replay.send(replayable.map(\.message))
        try await store.markReplayed(acknowledged.map { replayable[$0].row.id })
        for index in acknowledged { summary.replayed[replayable[index].row.status, default: 0] += 1 }
        if let failure {
            print(summary.report(topic: replay.topic, dryRun: false))
            throw failure
        }
    }

    /// The raw-topic message at `source`, or nil when the partition no longer holds it (retention).
    private static func consumedMessage(
        at source: KafkaTopicPartitionOffset,
        reader: KafkaPartitionReader
    ) async throws -> KafkaMessage? {
        var found: KafkaMessage?
        do {
            try await reader.read(source.topicPartition, offsets: source.offset..<(source.offset + 1)) { messages in
                found = messages.first { $0.offset == source.offset }
            }
        } catch let error as KafkaError where error.code == .refused {
            return nil
        }
        return found
    }

    private static func date(_ text: String, option: String) throws -> Date {
        guard let date = try? Date(text, strategy: .iso8601) else {
            throw ValidationError("\(option) takes an ISO 8601 time such as 2026-11-20T00:00:00Z, not '\(text)'")
        }
        return date
    }

    /// What a replay did, for its report.
    struct Summary {
        var replayed: [String: Int] = [:]
        /// V1 rows whose body the raw topic no longer holds.
        var version1Gone: [KafkaTopicPartitionOffset] = []
        var withoutHeaders = 0

        func report(topic: String, dryRun: Bool) -> String {
            let total = replayed.values.reduce(0, +)
            let statuses = replayed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            var lines = [
                "\(dryRun ? "would replay" : "replayed") \(total) rejected notification(s) to \(topic)"
                    + (statuses.isEmpty ? "" : ": \(statuses)")
            ]
            if !version1Gone.isEmpty {
                let examples = version1Gone.prefix(5).map { "\($0.topicPartition) offset \($0.offset)" }
                lines.append(
                    "skipped \(version1Gone.count) V1 notification(s) the raw topic no longer holds (stored with the "
                        + "shared secret redacted, and not in Apple's history): "
                        + examples.joined(separator: ", ") + (version1Gone.count > 5 ? ", ..." : "")
                )
            }
            if withoutHeaders > 0 {
                lines.append(
                    "skipped \(withoutHeaders) without raw-topic headers: nothing tells which app or environment "
                        + "they were for"
                )
            }
            return lines.joined(separator: "\n")
        }
    }
}
