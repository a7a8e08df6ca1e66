import KafkaClient
import NIOCore
import Testing

@Suite("Produce and consume through the mock cluster")
struct ProduceConsumeTests {
    @Test("10,000 keyed messages produced are all consumed by one consumer, none lost, in order per key")
    func tenThousandKeyedMessages() async throws {
        let cluster = try KafkaTestCluster(topics: ["orders": 8])
        let sent = SequencedMessage.make(count: 10_000, keys: 250)
        let reports = try await cluster.withProducer { producer in
            await producer.send(contentsOf: sent.map { $0.producerMessage(topic: "orders") })
        }
        #expect(reports.allSatisfy { (try? $0.get()) != nil })
        // Equal keys land on one partition, in the order sent.
        let partitionsByKey = Dictionary(grouping: zip(sent, reports), by: \.0.key).mapValues {
            Set($0.compactMap { try? $0.1.get().topicPartition.partition })
        }
        #expect(partitionsByKey.values.allSatisfy { $0.count == 1 })

        let consumer = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "readers", topics: ["orders"]),
            logger: cluster.logger
        )
        let events = try await consumer.collect { $0.messages.count >= sent.count }
        try await consumer.close()

        let received = events.messages.compactMap(SequencedMessage.init)
        #expect(received.count == sent.count)
        #expect(Set(received) == Set(sent))
        for (key, messages) in Dictionary(grouping: received, by: \.key) {
            #expect(messages.map(\.sequence) == Array(0..<messages.count), "order of \(key)")
        }
        #expect(Set(events.assigned) == Set((0..<8).map { KafkaTopicPartition(topic: "orders", partition: $0) }))
        // Headers and coordinates come with every message.
        let first = try #require(events.messages.first)
        #expect(
            first.headers.first(named: "sequence")
                == String(buffer: first.value).split(separator: "|").first.map(String.init)
        )
        #expect(first.timestamp != nil)
        #expect(first.offset >= 0)
    }
}
