import ArgumentParser
import KafkaClient
import Logging
import PipelineReplay
import PipelineServices

/// `asnp replay offsets`: a raw-topic offset range back onto the raw topic.
struct ReplayOffsetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offsets",
        abstract: "Replay a range of offsets of one raw-topic partition onto the raw topic.",
        discussion: """
            Reads offsets --from (inclusive) to --to (exclusive) of one partition of --topic (default \
            kafka.topics.raw; fails if the partition no longer holds --from) and produces each message again to \
            kafka.topics.raw with its key and headers (asnp-source: replay). The workers verify them again: \
            notifications already stored are recognised as duplicates, rejected ones get a new rejected row.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(help: "The topic to read. Default: kafka.topics.raw.")
    var topic: String?

    @Option(help: "The partition to read.")
    var partition: Int32

    @Option(help: "The first offset to replay.")
    var from: Int64

    @Option(help: "The offset after the last one to replay.")
    var to: Int64

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .warning

    func validate() throws {
        guard from >= 0, to > from, partition >= 0 else {
            throw ValidationError("need 0 <= --from < --to and --partition >= 0")
        }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.replay")
        logger.logLevel = logLevel
        let settings = try await PipelineSettings.load(file: config)
        let cluster = try settings.kafkaCluster(clientID: "asnp-replay")
        let rawTopic = try settings.rawTopic()
        let source = KafkaTopicPartition(topic: topic ?? rawTopic, partition: partition)
        let reader = try KafkaPartitionReader(cluster: cluster, logger: logger)
        let (from, to) = (self.from, self.to)
        let replayed: Int
        do {
            replayed = try await RawTopicReplay.with(cluster: cluster, topic: rawTopic, logger: logger) { replay in
                try await replay.replay(source, offsets: from..<to, reader: reader)
            }
        } catch let interrupted as ReplayInterrupted<Int> {
            print("replayed \(interrupted.progress) message(s) of \(source) to \(rawTopic) before a failure")
            throw interrupted.failure
        }
        print("replayed \(replayed) message(s) of \(source) offsets \(from)..<\(to) to \(rawTopic)")
    }
}
