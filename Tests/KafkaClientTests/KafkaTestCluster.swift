import AppStoreTestSupport
import Foundation
import KafkaClient
import Logging
import NIOCore

/// A mock cluster for one test, with the helpers the tests share.
///
/// Group timings are short so rebalances and crash detection take seconds, not the production defaults' minutes.
/// Set `ASNP_TEST_LOG=debug` to see librdkafka's and the client's logs.
struct KafkaTestCluster {
    /// A topic of the helpers' own, for ``warmUp(_:for:)``.
    static let warmUpTopic = "test-warm-up"
    /// How long ``warmUp(_:for:)`` waits for a producer to be ready before it gives up.
    static let readinessLimit: Duration = .seconds(60)

    let mock: KafkaMockCluster
    let logger: Logger
    /// The group protocol's exchange, when the cluster was made with `recordingGroupLog`.
    let groupLog: GroupLog?

    /// `recordingGroupLog` keeps librdkafka's group log of the mock and of every consumer made with
    /// ``consumerConfiguration(group:topics:rebalanceProtocol:)`` in ``groupLog``.
    init(
        brokers: Int = 1,
        topics: [String: Int] = [:],
        recordingGroupLog: Bool = false,
        label: String = #function
    ) throws {
        let printLevel = Logger.testLevel
        let groupLog = recordingGroupLog ? GroupLog() : nil
        var logger: Logger
        if let groupLog {
            logger = Logger(label: "test.kafka.\(label)") { groupLog.handler(label: $0, printLevel: printLevel) }
        } else {
            logger = Logger(label: "test.kafka.\(label)")
            logger.logLevel = printLevel
        }
        self.logger = logger
        self.groupLog = groupLog
        mock = try KafkaMockCluster(
            brokers: brokers,
            logger: Self.logger(logger, member: "mock"),
            debug: recordingGroupLog ? "mock" : nil
        )
        for (topic, partitions) in topics {
            try mock.createTopic(topic, partitions: partitions, replicationFactor: brokers)
        }
        try mock.createTopic(Self.warmUpTopic, partitions: 1, replicationFactor: brokers)
    }

    /// Returns once `producer` has what a first send to `topics` needs: its idempotent producer id (shown by an
    /// acknowledged message on a topic of the helpers' own, so the tests' topics hold only their messages) and the
    /// topics' metadata. A fresh producer takes a few round trips and librdkafka's backoffs for them, which a loaded
    /// 2-core run stretched past a 2 s delivery timeout; a short timeout under test must time what the test does.
    /// A warm-up message that times out (the producer's own timeout) is sent again.
    func warmUp(_ producer: KafkaProducer, for topics: [String]) async throws {
        let deadline = ContinuousClock.now.advanced(by: Self.readinessLimit)
        while true {
            do throws(KafkaError) {
                try await producer.send(
                    KafkaProducerMessage(topic: Self.warmUpTopic, value: ByteBuffer(string: "warm-up"))
                )
                break
            } catch {
                guard error.isRetriable, ContinuousClock.now < deadline else { throw error }
            }
        }
        for topic in topics {
            _ = try await producer.partitionCount(of: topic, timeout: Self.readinessLimit)
        }
    }

    func producerConfiguration(deliveryTimeout: Duration = .seconds(10)) -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(cluster: mock.clusterConfiguration)
        configuration.deliveryTimeout = deliveryTimeout
        return configuration
    }

    func consumerConfiguration(
        group: String,
        topics: [String],
        rebalanceProtocol: KafkaConsumerConfiguration.RebalanceProtocol = .cooperativeSticky
    ) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(
            cluster: mock.clusterConfiguration,
            groupID: group,
            topics: topics
        )
        configuration.rebalanceProtocol = rebalanceProtocol
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .milliseconds(500)
        configuration.maxPollInterval = .seconds(30)
        configuration.pollMaxWait = .milliseconds(50)
        let debug = [groupLog == nil ? nil : "cgrp", ProcessInfo.processInfo.environment["ASNP_TEST_RDKAFKA_DEBUG"]]
            .compactMap { $0 }
        if !debug.isEmpty {
            configuration.cluster.additionalProperties["debug"] = debug.joined(separator: ",")
        }
        return configuration
    }

    /// The cluster's logger, its lines marked as `member`'s (in ``groupLog``).
    func logger(member: String) -> Logger {
        Self.logger(logger, member: member)
    }

    private static func logger(_ logger: Logger, member: String) -> Logger {
        var logger = logger
        logger[metadataKey: "member"] = "\(member)"
        return logger
    }

    /// Runs `body` with a producer whose service runs meanwhile; the producer is shut down (drained) afterwards.
    func withProducer<T: Sendable>(
        _ configuration: KafkaProducerConfiguration? = nil,
        _ body: @Sendable (KafkaProducer) async throws -> T
    ) async throws -> T {
        let producer = try KafkaProducer(configuration: configuration ?? producerConfiguration(), logger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await producer.run()
                return nil
            }
            let result: T
            do {
                result = try await body(producer)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
            while let value = try await group.next() {
                if let value { return value }
            }
            return result
        }
    }
}

/// A message of the order tests: its key and its sequence number within the key.
struct SequencedMessage: Hashable, Sendable {
    var key: String
    var sequence: Int

    static func make(count: Int, keys: Int) -> [SequencedMessage] {
        (0..<count).map { SequencedMessage(key: "key-\($0 % keys)", sequence: $0 / keys) }
    }

    func producerMessage(topic: String, padding: Int = 0) -> KafkaProducerMessage {
        KafkaProducerMessage(
            topic: topic,
            key: key,
            value: ByteBuffer(string: "\(sequence)|" + String(repeating: "x", count: padding)),
            headers: [KafkaHeader(key: "sequence", string: "\(sequence)")]
        )
    }

    init(key: String, sequence: Int) {
        self.key = key
        self.sequence = sequence
    }

    /// Reads a consumed message back.
    init?(_ message: KafkaMessage) {
        guard let key = message.key.map({ String(buffer: $0) }),
            let sequence = String(buffer: message.value).split(separator: "|").first.flatMap({ Int($0) })
        else { return nil }
        self.init(key: key, sequence: sequence)
    }
}

extension KafkaConsumer {
    /// Polls until `predicate` holds for everything received so far, or `timeout` passes; returns all events.
    func collect(
        timeout: Duration = .seconds(60),
        until predicate: ([KafkaConsumerEvent]) -> Bool
    ) async throws -> [KafkaConsumerEvent] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var events: [KafkaConsumerEvent] = []
        while !predicate(events), ContinuousClock.now < deadline {
            events += try await poll(maxMessages: 500, maxWait: .milliseconds(50))
        }
        return events
    }
}

extension Array where Element == KafkaConsumerEvent {
    var messages: [KafkaMessage] {
        flatMap { event -> [KafkaMessage] in
            if case .messages(let messages) = event { return messages }
            return []
        }
    }

    var assigned: [KafkaTopicPartition] {
        flatMap { event -> [KafkaTopicPartition] in
            if case .partitionsAssigned(let partitions) = event { return partitions }
            return []
        }
    }

    var revocations: [KafkaPartitionRevocation] {
        compactMap { event -> KafkaPartitionRevocation? in
            if case .partitionsRevoked(let revocation) = event { return revocation }
            return nil
        }
    }
}
