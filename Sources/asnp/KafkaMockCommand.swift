import ArgumentParser
import Foundation
import KafkaClient
import Logging
import ServiceLifecycle
import UnixSignals

/// `asnp kafka-mock`: librdkafka's mock Kafka cluster on its own, for processes that share it (ingress, workers,
/// kcat) during development.
struct KafkaMockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kafka-mock",
        abstract: "Run an in-memory mock Kafka cluster on 127.0.0.1 until stopped.",
        discussion: """
            Starts librdkafka's mock cluster, creates the topics given with --topic, prints the bootstrap servers \
            as the first line of standard output (for example 127.0.0.1:41234,127.0.0.1:39017) and runs until \
            SIGINT or SIGTERM. Any Kafka client can use it; the data lives in memory only.

            The mock keeps only about 5 MB per partition (about 4,900 messages of 1 KiB) and silently drops older \
            messages; give topics enough partitions and keep consumers close behind. Topics a client merely names \
            are created with 4 partitions. Production uses a real Kafka cluster.
            """
    )

    @Option(help: "Number of brokers.")
    var brokers = 1

    @Option(
        name: .customLong("topic"),
        help: ArgumentHelp("A topic to create, as NAME:PARTITIONS. Repeat for more.", valueName: "name:partitions")
    )
    var topics: [TopicArgument] = []

    @Option(help: "Replicas per partition (at most --brokers). Default: all brokers, up to 3.")
    var replicationFactor: Int?

    @Option(help: "Log level of the mock's own log on standard error: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        guard (1...32).contains(brokers) else { throw ValidationError("--brokers must be 1 to 32") }
        if let replicationFactor, !(1...brokers).contains(replicationFactor) {
            throw ValidationError("--replication-factor must be 1 to --brokers (\(brokers))")
        }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.kafka-mock", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = logLevel
        let cluster = try KafkaMockCluster(brokers: brokers, logger: logger)
        for topic in topics {
            try cluster.createTopic(
                topic.name,
                partitions: topic.partitions,
                replicationFactor: replicationFactor ?? min(brokers, 3)
            )
        }
        // The first line of standard output is the contract: scripts and tests read the bootstrap servers from it.
        FileHandle.standardOutput.write(Data("\(cluster.bootstrapServers)\n".utf8))
        logger.notice(
            "mock Kafka cluster running; stop with Ctrl-C",
            metadata: [
                "kafka.bootstrap": "\(cluster.bootstrapServers)",
                "kafka.brokers": "\(brokers)",
                "kafka.topics": "\(topics.map(\.description).joined(separator: ","))",
            ]
        )
        let group = ServiceGroup(
            services: [MockClusterService(cluster: cluster)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        try await group.run()
        logger.notice("mock Kafka cluster stopped")
    }
}

/// Keeps the mock cluster alive until graceful shutdown; the cluster stops when released.
struct MockClusterService: Service {
    let cluster: KafkaMockCluster

    func run() async throws {
        try? await gracefulShutdown()
        withExtendedLifetime(cluster) {}
    }
}

/// `NAME:PARTITIONS` on the command line.
struct TopicArgument: ExpressibleByArgument, CustomStringConvertible {
    var name: String
    var partitions: Int

    init?(argument: String) {
        guard let colon = argument.lastIndex(of: ":"), colon != argument.startIndex,
            let partitions = Int(argument[argument.index(after: colon)...]), partitions > 0
        else { return nil }
        name = String(argument[..<colon])
        self.partitions = partitions
    }

    var description: String { "\(name):\(partitions)" }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
