import AppStoreTestSupport
import KafkaClient
import NIOCore
import Testing

@Suite("Admin: partitions, watermarks, committed offsets, lag", .tags(.pipeline))
struct AdminTests {
    static func partition(_ index: Int32) -> KafkaTopicPartition {
        KafkaTopicPartition(topic: "tracked", partition: index)
    }

    @Test("Lag is the high watermark minus the group's committed offset, per partition; commits are read back as made")
    func lagFollowsCommits() async throws {
        let cluster = try KafkaTestCluster(topics: ["tracked": 3])
        let admin = try KafkaAdminClient(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        #expect(try await admin.partitionCount(of: "tracked") == 3)

        let counts: [Int32: Int] = [0: 5, 1: 7, 2: 11]
        _ = try await cluster.withProducer { producer in
            await producer.send(
                contentsOf: counts.flatMap { partition, count in
                    (0..<count).map {
                        KafkaProducerMessage(topic: "tracked", value: ByteBuffer(string: "\($0)"), partition: partition)
                    }
                }
            )
        }
        let marks = try await admin.watermarks(of: "tracked")
        #expect(marks.mapValues(\.high) == [Self.partition(0): 5, Self.partition(1): 7, Self.partition(2): 11])
        #expect(marks.values.allSatisfy { $0.low == 0 })

        // A group that never committed lags by everything.
        let before = try await admin.consumerLag(group: "auditors", topic: "tracked")
        #expect(before.map(\.lag) == [5, 7, 11])
        #expect(before.allSatisfy { $0.committedOffset == nil })

        let consumer = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "auditors", topics: ["tracked"]),
            logger: cluster.logger
        )
        _ = try await consumer.collect { $0.messages.count >= 23 }
        try await consumer.commit([
            KafkaTopicPartitionOffset(Self.partition(0), offset: 5),
            KafkaTopicPartitionOffset(Self.partition(1), offset: 3),
        ])
        consumer.commitInBackground([KafkaTopicPartitionOffset(Self.partition(2), offset: 11)])

        #expect(
            try await eventually {
                try await admin.committedOffsets(group: "auditors", partitions: [Self.partition(2)])[Self.partition(2)]
                    == 11
            },
            "the background commit lands"
        )
        let committed = try await admin.committedOffsets(group: "auditors", partitions: (0..<3).map(Self.partition))
        #expect(committed == [Self.partition(0): 5, Self.partition(1): 3, Self.partition(2): 11])
        let after = try await admin.consumerLag(group: "auditors", topic: "tracked")
        #expect(after.map(\.lag) == [0, 4, 0])
        #expect(after.map(\.topicPartition) == (0..<3).map(Self.partition))

        try await consumer.close()
        let closed = await #expect(throws: KafkaError.self) {
            try await consumer.commit([KafkaTopicPartitionOffset(Self.partition(0), offset: 5)])
        }
        #expect(closed?.code == .shutDown)
    }

    /// The mock creates any topic a metadata request names (it ignores the request's "do not create" flag), so a
    /// missing topic is simulated with a topic error.
    @Test("Asking about a topic the cluster does not have fails with the broker's error, naming the topic")
    func unknownTopic() async throws {
        let cluster = try KafkaTestCluster(topics: ["gone": 2])
        let admin = try KafkaAdminClient(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        #expect(try await admin.partitionCount(of: "gone") == 2)
        cluster.mock.setTopicError(.unknownTopicOrPartition, topic: "gone")
        let error = await #expect(throws: KafkaError.self) { try await admin.partitionCount(of: "gone") }
        #expect(error?.rdKafkaError == "UNKNOWN_TOPIC_OR_PART")
        #expect(error?.description.contains("'gone'") == true)
        cluster.mock.setTopicError(nil, topic: "gone")
        #expect(try await admin.partitionCount(of: "gone") == 2)
    }

    @Test(
        "Topic creation through the admin API fails with a clear error where the cluster cannot do it (the mock has no controller)"
    )
    func createTopicsOnMock() async throws {
        let cluster = try KafkaTestCluster()
        let admin = try KafkaAdminClient(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        let error = await #expect(throws: KafkaError.self) {
            try await admin.createTopics([KafkaTopicSpecification(name: "new", partitions: 6)], timeout: .seconds(5))
        }
        #expect(error?.code == .timedOut)
        #expect(error?.debugDescription.contains("controller") == true)
        // The mock's own way works, and the admin client sees the result.
        try cluster.mock.createTopic("new", partitions: 6)
        #expect(try await admin.partitionCount(of: "new") == 6)
    }
}
