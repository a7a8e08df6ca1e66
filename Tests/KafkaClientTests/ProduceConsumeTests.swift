import AppStoreTestSupport
import KafkaClient
import NIOCore
import Testing

@Suite("Produce and consume through the mock cluster", .tags(.pipeline))
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

    @Test("Consumed as slices of each poll's buffer, or with buffersPerMessage each in a buffer of its own")
    func buffersPerMessage() async throws {
        let cluster = try KafkaTestCluster(topics: ["bodies": 2])
        let sent = SequencedMessage.make(count: 200, keys: 20)
        _ = try await cluster.withProducer { producer in
            await producer.send(contentsOf: sent.map { $0.producerMessage(topic: "bodies") })
        }
        for buffersPerMessage in [false, true] {
            var configuration = cluster.consumerConfiguration(group: "readers-\(buffersPerMessage)", topics: ["bodies"])
            configuration.buffersPerMessage = buffersPerMessage
            let consumer = try KafkaConsumer(configuration: configuration, logger: cluster.logger)
            let events = try await consumer.collect { $0.messages.count >= sent.count }
            try await consumer.close()
            #expect(Set(events.messages.compactMap(SequencedMessage.init)) == Set(sent))
            // A buffer of its own holds one message's bytes (its capacity rounded up to at most twice that); a poll's
            // buffer holds those of many.
            let sizes = events.messages.map { message in
                (
                    storage: message.value.storageCapacity,
                    own: message.value.readableBytes + (message.key?.readableBytes ?? 0)
                        + message.headers.reduce(0) { $0 + ($1.value?.readableBytes ?? 0) }
                )
            }
            if buffersPerMessage {
                #expect(sizes.allSatisfy { $0.storage <= 2 * $0.own })
            } else {
                #expect(sizes.contains { $0.storage > 10 * $0.own })
            }
        }
    }

    @Test("trySend reports each message once, through its callback, and every message reported delivered is consumed")
    func trySendReportsThroughTheCallback() async throws {
        let cluster = try KafkaTestCluster(topics: ["events": 4])
        let sent = SequencedMessage.make(count: 500, keys: 50)
        let reports = try await cluster.withProducer { producer in
            await withTaskGroup(of: Result<KafkaDeliveryReport, KafkaError>?.self) { group in
                for message in sent {
                    group.addTask {
                        await withCheckedContinuation { continuation in
                            let handed = producer.trySend(message.producerMessage(topic: "events")) { result in
                                // A checked continuation traps if the callback came twice.
                                continuation.resume(returning: result)
                            }
                            // The queue has room for far more: nothing is left waiting.
                            if !handed { continuation.resume(returning: nil) }
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(reports.count == sent.count)
        #expect(reports.allSatisfy { report in report.map { (try? $0.get()) != nil } ?? false })

        let consumer = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "readers", topics: ["events"]),
            logger: cluster.logger
        )
        let events = try await consumer.collect { $0.messages.count >= sent.count }
        try await consumer.close()
        #expect(Set(events.messages.compactMap(SequencedMessage.init)) == Set(sent))
    }
}
