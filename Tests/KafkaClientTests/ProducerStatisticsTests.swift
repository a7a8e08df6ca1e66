import AppStoreTestSupport
import KafkaClient
import Testing

@Suite(
    "The producer's statistics: what each topic was written, in batches and bytes after compression",
    .tags(.pipeline)
)
struct ProducerStatisticsTests {
    @Test(
        "Every message acknowledged is counted once, in batches linger fills, and zstd's bytes are a fraction of none's",
        arguments: ["none", "zstd"]
    )
    func countsBatchesMessagesAndBytes(codec: String) async throws {
        let cluster = try KafkaTestCluster(topics: ["bodies": 2])
        var configuration = cluster.producerConfiguration()
        configuration.compression = codec
        configuration.linger = .milliseconds(50)
        configuration.statisticsInterval = .milliseconds(100)
        let padding = 2_000
        let sent = SequencedMessage.make(count: 400, keys: 40)
        let statistics = try await cluster.withProducer(configuration) { producer in
            let reports = await producer.send(
                contentsOf: sent.map { $0.producerMessage(topic: "bodies", padding: padding) }
            )
            #expect(reports.allSatisfy { (try? $0.get()) != nil })
            // Reports come every interval; each counts the batches sent since the one before.
            _ = await eventually { producer.statistics.topics["bodies"]?.messages == sent.count }
            return producer.statistics
        }
        let topic = try #require(statistics.topics["bodies"])
        #expect(topic.messages == sent.count)
        // All 400 were handed over at once to two partitions: far fewer batches than messages.
        #expect(topic.batches >= 2)
        #expect(topic.batches < sent.count / 4)
        let valueBytes = sent.count * padding
        if codec == "none" {
            #expect(topic.bytes > valueBytes)
        } else {
            // The padding repeats one letter: zstd keeps a small part of it.
            #expect(topic.bytes < valueBytes / 10)
        }
    }

    @Test("Without a statistics interval the producer reports nothing")
    func noIntervalNoFigures() async throws {
        let cluster = try KafkaTestCluster(topics: ["bodies": 1])
        let statistics = try await cluster.withProducer { producer in
            try await producer.send(SequencedMessage(key: "k", sequence: 0).producerMessage(topic: "bodies"))
            return producer.statistics
        }
        #expect(statistics.topics.isEmpty)
    }

    @Test("A statistics interval that is not positive is refused")
    func nonPositiveIntervalRefused() throws {
        let cluster = try KafkaTestCluster(topics: ["bodies": 1])
        var configuration = cluster.producerConfiguration()
        configuration.statisticsInterval = .zero
        #expect(throws: KafkaError.self) { try KafkaProducer(configuration: configuration, logger: cluster.logger) }
    }
}
