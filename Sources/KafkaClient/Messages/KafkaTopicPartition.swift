/// One partition of one topic.
public struct KafkaTopicPartition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }
}

/// A partition and an offset in it. For commits, the offset is the **next** message to read (the last processed
/// offset + 1), as Kafka defines committed offsets.
public struct KafkaTopicPartitionOffset: Sendable, Hashable, CustomStringConvertible {
    public var topicPartition: KafkaTopicPartition
    public var offset: Int64

    public init(_ topicPartition: KafkaTopicPartition, offset: Int64) {
        self.topicPartition = topicPartition
        self.offset = offset
    }

    public init(topic: String, partition: Int32, offset: Int64) {
        self.init(KafkaTopicPartition(topic: topic, partition: partition), offset: offset)
    }

    public var description: String { "\(topicPartition)@\(offset)" }
}
