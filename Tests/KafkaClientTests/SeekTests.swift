import AppStoreTestSupport
import KafkaClient
import NIOCore
import Testing

@Suite("Seeking back: a partition hands out its messages again from the offset sought", .tags(.pipeline))
struct SeekTests {
    static let partition = KafkaTopicPartition(topic: "work", partition: 0)

    @Test(
        """
        Seeking back, on a partition running, on one paused (then resumed) and on one just assigned: its messages come \
        again from the offset sought, none skipped; the positions follow
        """
    )
    func seekBack() async throws {
        let cluster = try KafkaTestCluster(topics: ["work": 1])
        _ = try await cluster.withProducer { producer in
            await producer.send(contentsOf: PauseResumeTests.messages(Self.partition, 0..<100))
        }
        let consumer = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "seeking", topics: ["work"]),
            logger: cluster.logger
        )
        // Just assigned, nothing handed out yet (a worker's claim rewinds so), no committed offset: no position.
        var events: [KafkaConsumerEvent] = []
        while events.assigned.isEmpty {
            events += try await consumer.poll(maxMessages: 10, maxWait: .milliseconds(100))
        }
        #expect(events.messages.isEmpty)
        #expect(consumer.positions(of: [Self.partition]).isEmpty)
        try await consumer.seek([KafkaTopicPartitionOffset(Self.partition, offset: 40)])
        #expect(consumer.positions(of: [Self.partition]) == [Self.partition: 40])
        var received = try await consumer.collect { ($0.messages.last?.offset ?? 0) >= 99 }.messages
        #expect(received.map(\.offset) == (40..<100).map(Int64.init), "from the offset sought")

        // Running: back to 10.
        try await consumer.seek([KafkaTopicPartitionOffset(Self.partition, offset: 10)])
        received = try await consumer.collect { ($0.messages.last?.offset ?? 0) >= 99 }.messages
        #expect(received.map(\.offset) == (10..<100).map(Int64.init), "every offset from 10 again, in order")

        // Paused, sought back, then resumed: the resume keeps the offset sought.
        try await consumer.pause([Self.partition])
        try await consumer.seek([KafkaTopicPartitionOffset(Self.partition, offset: 70)])
        try await consumer.resume([Self.partition])
        received = try await consumer.collect { ($0.messages.last?.offset ?? 0) >= 99 }.messages
        #expect(received.map(\.offset) == (70..<100).map(Int64.init), "from 70 after the resume")
        #expect(consumer.positions(of: [Self.partition]) == [Self.partition: 100])

        // A partition not owned.
        let unowned = KafkaTopicPartitionOffset(topic: "work", partition: 5, offset: 0)
        let error = await #expect(throws: KafkaError.self) { try await consumer.seek([unowned]) }
        #expect(error?.code == .invalidState)
        try await consumer.close()
    }
}
