import AppStoreTestSupport
import KafkaClient
import NIOCore
import Testing

@Suite("Per-partition pause and resume", .tags(.pipeline))
struct PauseResumeTests {
    @Test(
        "A paused partition yields nothing while others go on; after resume it continues right after the last message handed out"
    )
    func pauseAndResume() async throws {
        let cluster = try KafkaTestCluster(topics: ["work": 2])
        let paused = KafkaTopicPartition(topic: "work", partition: 0)
        let running = KafkaTopicPartition(topic: "work", partition: 1)
        _ = try await cluster.withProducer { producer in
            await producer.send(contentsOf: Self.messages(paused, 0..<300) + Self.messages(running, 0..<300))
        }

        let consumer = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "pausing", topics: ["work"]),
            logger: cluster.logger
        )
        // Take small batches until part of partition 0 was handed out; librdkafka has more of it prefetched.
        var received: [KafkaMessage] = []
        while !received.contains(where: { $0.topicPartition == paused }) {
            received += try await consumer.poll(maxMessages: 10, maxWait: .milliseconds(100)).messages
        }
        try await consumer.pause([paused])
        #expect(consumer.pausedPartitions == [paused])
        let handedOutBeforePause = received.filter { $0.topicPartition == paused }.count
        #expect(handedOutBeforePause < 300)

        _ = try await cluster.withProducer { producer in
            await producer.send(contentsOf: Self.messages(running, 300..<400))
        }
        // Until the other partition has everything (a fixed 3 s could end first on a loaded machine, and its last
        // messages then came after the resume).
        let whilePaused = try await consumer.collect {
            $0.messages.filter { $0.topicPartition == running }.count
                + received.filter { $0.topicPartition == running }.count >= 400
        }.messages
        #expect(!whilePaused.contains { $0.topicPartition == paused }, "nothing of a paused partition")
        #expect(whilePaused.contains { $0.topicPartition == running }, "the other partition goes on")
        received += whilePaused

        try await consumer.resume([paused])
        #expect(consumer.pausedPartitions.isEmpty)
        received += try await consumer.collect { events in
            (received + events.messages).filter { $0.topicPartition == paused }.count >= 300
        }.messages
        try await consumer.close()

        // Every offset exactly once, in order: nothing skipped or repeated around the pause.
        #expect(received.filter { $0.topicPartition == paused }.map(\.offset) == (0..<300).map(Int64.init))
        #expect(received.filter { $0.topicPartition == running }.map(\.offset) == (0..<400).map(Int64.init))
    }

    static func messages(_ partition: KafkaTopicPartition, _ range: Range<Int>) -> [KafkaProducerMessage] {
        range.map {
            KafkaProducerMessage(topic: "work", value: ByteBuffer(string: "\($0)"), partition: partition.partition)
        }
    }

    @Test("Pausing a partition the member does not own fails with INVALID_STATE; resuming one is skipped")
    func pauseUnowned() async throws {
        let cluster = try KafkaTestCluster(topics: ["work": 2])
        let consumer = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "pausing", topics: ["work"]),
            logger: cluster.logger
        )
        // A partition librdkafka knows (it is subscribed to the topic) but this member does not own yet.
        let notYetOwned = KafkaTopicPartition(topic: "work", partition: 1)
        let error = await #expect(throws: KafkaError.self) { try await consumer.pause([notYetOwned]) }
        #expect(error?.code == .invalidState)
        try await consumer.resume([notYetOwned])
        #expect(consumer.pausedPartitions.isEmpty)
        try await consumer.close()
    }

    @Test("A paused partition that is revoked and assigned again is not paused any more")
    func pauseClearedByRevocation() async throws {
        let cluster = try KafkaTestCluster(topics: ["work": 2])
        let configuration = cluster.consumerConfiguration(
            group: "pausing",
            topics: ["work"],
            rebalanceProtocol: .eagerRange
        )
        let a = GroupMember(
            name: "A",
            consumer: try KafkaConsumer(configuration: configuration, logger: cluster.logger)
        )
        #expect(
            try await eventually {
                try await a.pollOnce(commit: false); return a.consumer.assignment.count == 2
            }
        )
        let partition = KafkaTopicPartition(topic: "work", partition: 0)
        try await a.consumer.pause([partition])

        // B joins (eager: A gives up everything), then leaves: A gets both partitions back.
        let b = GroupMember(
            name: "B",
            consumer: try KafkaConsumer(configuration: configuration, logger: cluster.logger)
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await b.pollUntilCancelled(commit: false) }
            #expect(
                try await eventually {
                    try await a.pollOnce(commit: false); return b.consumer.assignment.count == 1
                }
            )
            group.cancelAll()
            try await group.waitForAll()
        }
        #expect(!a.events.revocations.isEmpty)
        try await b.consumer.close()
        #expect(
            try await eventually {
                try await a.pollOnce(commit: false); return a.consumer.assignment.count == 2
            }
        )
        #expect(a.consumer.pausedPartitions.isEmpty)

        _ = try await cluster.withProducer { producer in
            await producer.send(contentsOf: Self.messages(partition, 0..<10))
        }
        #expect(
            try await eventually {
                try await a.pollOnce(commit: false)
                return a.deliveries.filter { $0.partition == partition }.count == 10
            },
            "the partition is fetched again"
        )
        try await a.consumer.close()
    }
}
