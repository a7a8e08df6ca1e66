import AppStoreTestSupport
import KafkaClient
import NIOCore
import Testing

@Suite("Messages deleted before the group consumed them are reported, not skipped silently", .tags(.pipeline))
struct OffsetGapTests {
    @Test(
        "A committed offset below the log start yields a gap naming the lost offsets, then the oldest message kept; a new group sees none"
    )
    func retentionGap() async throws {
        let cluster = try KafkaTestCluster(topics: ["retained": 1])
        let partition = KafkaTopicPartition(topic: "retained", partition: 0)
        _ = try await cluster.withProducer { producer in
            await producer.send(contentsOf: (0..<10).map { Self.message("small \($0)") })
        }

        // The group reads three messages and commits after them.
        let first = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "slow", topics: ["retained"]),
            logger: cluster.logger
        )
        let early = try await first.collect { $0.messages.count >= 3 }
        #expect(early.messages.count >= 3)
        try await first.commit([KafkaTopicPartitionOffset(partition, offset: 3)])
        try await first.close()

        // The mock keeps about 5 MB per partition: 7 MB more (uncompressed) pushes the oldest messages out.
        var uncompressed = cluster.producerConfiguration()
        uncompressed.compression = "none"
        let filler = String(repeating: "x", count: 100_000)
        let reports = try await cluster.withProducer(uncompressed) { producer in
            await producer.send(contentsOf: (0..<70).map { Self.message("large \($0) \(filler)") })
        }
        #expect(reports.allSatisfy { (try? $0.get()) != nil })

        let second = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "slow", topics: ["retained"]),
            logger: cluster.logger
        )
        let events = try await second.collect { !$0.messages.isEmpty }
        try await second.close()
        let gaps = events.gaps
        let firstKept = try #require(events.messages.first).offset
        #expect(firstKept > 10, "the small messages are gone")
        #expect(gaps == [KafkaOffsetGap(topicPartition: partition, offsets: 3..<firstKept, logStartOffset: firstKept)])
        // The gap is reported before the messages that follow it.
        let gapIndex = events.firstIndex { if case .offsetGap = $0 { true } else { false } }
        let messagesIndex = events.firstIndex { if case .messages = $0 { true } else { false } }
        #expect(gapIndex != nil && messagesIndex != nil && gapIndex! < messagesIndex!)

        // A group with no committed offset starts at the oldest message kept: nothing it expected was lost.
        let fresh = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "fresh", topics: ["retained"]),
            logger: cluster.logger
        )
        let freshEvents = try await fresh.collect { $0.messages.count >= 70 - Int(firstKept - 10) }
        try await fresh.close()
        #expect(freshEvents.gaps.isEmpty)
        #expect(freshEvents.messages.first?.offset == firstKept)
        #expect(freshEvents.messages.map(\.offset) == Array(firstKept..<80))
    }

    static func message(_ text: String) -> KafkaProducerMessage {
        KafkaProducerMessage(topic: "retained", value: ByteBuffer(string: text), partition: 0)
    }
}

extension Array where Element == KafkaConsumerEvent {
    var gaps: [KafkaOffsetGap] {
        compactMap { event -> KafkaOffsetGap? in
            if case .offsetGap(let gap) = event { return gap }
            return nil
        }
    }
}
