import AppStoreTestSupport
import KafkaClient
import NIOCore
import Testing

/// One `KafkaPartitionReader` read many times, as `asnp tail --follow` (every round) and `asnp replay rejected` (per
/// row) use it: no read may end early, or hand out another read's messages, because of what an earlier read left in
/// the reader's queue.
@Suite("Partition reader", .tags(.pipeline))
struct PartitionReaderTests {
    static let topic = "reader"

    @Test("Each later read of a partition reads what arrived since the one before, to its end, round after round")
    func followsAPartitionRoundAfterRound() async throws {
        let cluster = try KafkaTestCluster(topics: [Self.topic: 2])
        let reader = try KafkaPartitionReader(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        let partitions = (0..<2).map { KafkaTopicPartition(topic: Self.topic, partition: Int32($0)) }
        try await cluster.withProducer { producer in
            try await cluster.warmUp(producer, for: [Self.topic])
            var next: [Int64] = [0, 0]
            for round in 0..<12 {
                // Both partitions grow each round, and each is read from where its last read ended to its new end:
                // the earlier read's end of partition and prefetched messages are what could end this one early.
                for partition in partitions {
                    for index in 0..<(1 + round % 3) {
                        _ = try await producer.send(Self.message("\(round).\(index)", to: partition))
                    }
                }
                for partition in partitions {
                    let index = Int(partition.partition)
                    let end = next[index] + Int64(1 + round % 3)
                    var read: [Int64] = []
                    try await reader.read(partition, offsets: next[index]..<end) { messages in
                        read += messages.map(\.offset)
                    }
                    #expect(read == Array(next[index]..<end), "round \(round), \(partition)")
                    next[index] = end
                }
            }
        }
    }

    @Test("Passes over every partition of three topics while they are written read everything once, in order")
    func catchesUpWithPartitionsBeingWritten() async throws {
        let topics = ["reader-a", "reader-b", "reader-c"]
        let cluster = try KafkaTestCluster(topics: Dictionary(uniqueKeysWithValues: topics.map { ($0, 4) }))
        let reader = try KafkaPartitionReader(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        let admin = try KafkaAdminClient(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        let produced = 300
        let follower = Follower(topics: topics, reader: reader, admin: admin)
        try await cluster.withProducer { producer in
            try await cluster.warmUp(producer, for: topics)
            for index in 0..<produced {
                _ = try await producer.send(
                    KafkaProducerMessage(topic: topics[index % 3], key: "\(index)", value: ByteBuffer(string: "x"))
                )
                if index % 20 == 0 { try await follower.pass() }
            }
        }
        try await follower.pass()
        let read = await follower.read
        #expect(read.values.map(\.count).reduce(0, +) == produced)
        for (partition, offsets) in read {
            #expect(offsets == Array(0..<Int64(offsets.count)), "\(partition)")
        }
    }

    @Test("Reads started at once on one reader each read their own range, one after another")
    func concurrentReadsTakeTurns() async throws {
        let partitions = (0..<2).map { KafkaTopicPartition(topic: Self.topic, partition: Int32($0)) }
        try await Self.withReader(over: 100, messagesIn: partitions) { reader in
            // As the soak's follower and its drain once did: each read's assignment replaced the other's, and both read
            // less than their ranges.
            try await withThrowingTaskGroup(of: (KafkaTopicPartition, [Int64]).self) { reads in
                for index in 0..<8 {
                    let partition = partitions[index % 2]
                    reads.addTask {
                        var offsets: [Int64] = []
                        try await reader.read(partition, offsets: 0..<50, chunk: 10) { offsets += $0.map(\.offset) }
                        return (partition, offsets)
                    }
                }
                for try await (partition, offsets) in reads {
                    #expect(offsets == Array(0..<50), "\(partition)")
                }
            }
        }
    }

    @Test("Single offsets read in any order are each that offset's message, whatever was read before")
    func readsSingleOffsetsInAnyOrder() async throws {
        let partition = KafkaTopicPartition(topic: Self.topic, partition: 1)
        try await Self.withReader(over: 40, messagesIn: [partition]) { reader in
            // Backwards, then forwards with gaps, then one offset twice: each read's prefetch runs past its range.
            let order: [Int64] = Array((0..<40).reversed()) + Array(stride(from: 0, to: 40, by: 7)) + [12, 12]
            for offset in order {
                var values: [String] = []
                try await reader.read(partition, offsets: offset..<(offset + 1)) { messages in
                    values += messages.map { String(buffer: $0.value) }
                }
                #expect(values == ["\(offset)"], "offset \(offset)")
            }
        }
    }

    @Test("A range past the partition's end reads to the end and stops there")
    func stopsAtThePartitionsEnd() async throws {
        let partition = KafkaTopicPartition(topic: Self.topic, partition: 0)
        try await Self.withReader(over: 10, messagesIn: [partition]) { reader in
            for _ in 0..<3 {
                var read: [Int64] = []
                try await reader.read(partition, offsets: 6..<100) { read += $0.map(\.offset) }
                #expect(read == Array(6..<10))
            }
        }
    }

    @Test("A read that timed out on a slow broker leaves nothing that ends the next read early")
    func readsOnAfterATimedOutRead() async throws {
        let cluster = try KafkaTestCluster(topics: [Self.topic: 2])
        let reader = try KafkaPartitionReader(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        let partition = KafkaTopicPartition(topic: Self.topic, partition: 0)
        var end: Int64 = 0
        for round in 0..<6 {
            try await cluster.withProducer { producer in
                try await cluster.warmUp(producer, for: [Self.topic])
                for index in 0..<5 {
                    _ = try await producer.send(Self.message("\(round).\(index)", to: partition))
                }
            }
            // The round's first read is answered after it timed out (its fetch or its end of partition lands in the
            // queue after the read gave up); the second, the broker quick again, must read the round's messages.
            try cluster.mock.setRoundTripTime(round % 2 == 0 ? .seconds(2) : .milliseconds(800), broker: 1)
            await #expect(throws: KafkaError.self) {
                try await reader.read(partition, offsets: end..<(end + 5), timeout: .milliseconds(500)) { _ in }
            }
            try cluster.mock.setRoundTripTime(.zero, broker: 1)
            var read: [Int64] = []
            try await reader.read(partition, offsets: end..<(end + 5)) { read += $0.map(\.offset) }
            #expect(read == Array(end..<(end + 5)), "round \(round)")
            end += 5
        }
    }

    /// Reads every partition of `topics` from where its last read ended to its end, a pass at a time.
    private actor Follower {
        let topics: [String]
        let reader: KafkaPartitionReader
        let admin: KafkaAdminClient
        private(set) var read: [KafkaTopicPartition: [Int64]] = [:]
        private var next: [KafkaTopicPartition: Int64] = [:]

        init(topics: [String], reader: KafkaPartitionReader, admin: KafkaAdminClient) {
            self.topics = topics
            self.reader = reader
            self.admin = admin
        }

        func pass() async throws {
            for topic in topics {
                for (partition, marks) in try await admin.watermarks(of: topic).sorted(by: { $0.key < $1.key }) {
                    let from = next[partition, default: 0]
                    guard marks.high > from else { continue }
                    var offsets: [Int64] = []
                    try await reader.read(partition, offsets: from..<marks.high) { offsets += $0.map(\.offset) }
                    read[partition, default: []] += offsets
                    if let last = offsets.last { next[partition] = last + 1 }
                }
            }
        }
    }

    /// Runs `body` with a reader of a fresh cluster whose `partitions` of ``topic`` hold `count` messages between
    /// them, dealt in turn, each valued with its index.
    private static func withReader(
        over count: Int,
        messagesIn partitions: [KafkaTopicPartition],
        _ body: (KafkaPartitionReader) async throws -> Void
    ) async throws {
        let cluster = try KafkaTestCluster(topics: [topic: 2])
        try await cluster.withProducer { producer in
            try await cluster.warmUp(producer, for: [topic])
            for index in 0..<count {
                _ = try await producer.send(message("\(index)", to: partitions[index % partitions.count]))
            }
        }
        let reader = try KafkaPartitionReader(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        try await body(reader)
        withExtendedLifetime(cluster) {}
    }

    private static func message(_ value: String, to partition: KafkaTopicPartition) -> KafkaProducerMessage {
        KafkaProducerMessage(topic: partition.topic, value: ByteBuffer(string: value), partition: partition.partition)
    }
}
