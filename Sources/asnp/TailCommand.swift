import ArgumentParser
import CommandSupport
import Foundation
import KafkaClient
import Logging
import PipelineContract
import PipelineReports
import PipelineServices

/// `asnp tail`: an output topic's events as JSON lines, for people and scripts downstream.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print an output topic's events as JSON lines: key, headers (CloudEvents attributes) and value.",
        discussion: """
            Reads kafka.topics.decoded, kafka.topics.subscriptionState or kafka.topics.deadLetter outside any \
            consumer group (commits nothing). Each line is {"topic", "partition", "offset", "key", "headers", \
            "value"}: the value as JSON when its content-type is application/json, else "valueBase64". Events come \
            in order per partition, so per key. Without --follow it stops at the end each partition had when it \
            started. Docs/contract/README.md describes the events; its validator reads these lines. Exit 3 if Kafka \
            cannot be read.
            """
    )

    enum Stream: String, ExpressibleByArgument, CaseIterable {
        case decoded
        case state
        case deadLetters = "dead-letters"
    }

    enum Start: String, ExpressibleByArgument, CaseIterable {
        case beginning
        case end
    }

    @Argument(help: "The topic: decoded, state or dead-letters.")
    var stream: Stream

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(help: "Where to start: beginning (every event the topic keeps) or end (only new ones; needs --follow).")
    var from: Start = .beginning

    @Flag(help: "Keep printing new events until interrupted.")
    var follow = false

    @Option(name: .customLong("key"), help: "Only events with this key (repeatable).")
    var keys: [String] = []

    @Option(
        name: .customLong("type"),
        help: "Only events of this ce_type, or whose ce_type ends in .TYPE, e.g. DID_RENEW (repeatable)."
    )
    var types: [String] = []

    @Option(help: "Stop after printing this many events.")
    var limit: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .warning

    func validate() throws {
        if from == .end, !follow { throw ValidationError("--from end prints only new events: add --follow") }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.tail")
        logger.logLevel = logLevel
        let settings = try await PipelineSettings.load(file: config)
        let cluster = try settings.kafkaCluster(clientID: "asnp-tail")
        let topics = try settings.outputTopics()
        let topic =
            switch stream {
            case .decoded: topics.decoded
            case .state: topics.subscriptionState
            case .deadLetters: topics.deadLetter
            }
        let filter = TailFilter(keys: Set(keys), types: types)
        let tail = OutputTopicTail(
            topic: topic,
            admin: try KafkaAdminClient(cluster: cluster, logger: logger),
            reader: try KafkaPartitionReader(cluster: cluster, logger: logger),
            follow: follow
        )
        let output = StreamWriter(handle: .standardOutput)
        var printed = 0
        // The next offset to read per partition; partitions added later start at their beginning.
        let start = from == .end ? try await tail.ends() : [:]
        do {
            try await tail.read(from: start) { messages in
                // Flushed per chunk: a follower sees each event about when it arrives.
                defer { output.flush() }
                for message in messages where filter.accepts(message) {
                    output.write(TailLine(message).json + "\n")
                    printed += 1
                    if let limit, printed >= limit { throw LimitReached() }
                }
            }
        } catch is LimitReached {}
        output.flush()
    }

    private struct LimitReached: Error {}
}
