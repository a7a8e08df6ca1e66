/// One partition of one topic.
package struct KafkaTopicPartition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The topic name.
    package var topic: String
    /// The partition number, from 0.
    package var partition: Int32

    /// A partition of a topic.
    package init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    /// `topic[partition]`, for example `notifications[3]`.
    package var description: String { "\(topic)[\(partition)]" }

    /// Orders by topic name, then partition number.
    package static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }
}

/// A partition and an offset in it. For commits, the offset is the **next** message to read (the last processed
/// offset + 1), as Kafka defines committed offsets.
package struct KafkaTopicPartitionOffset: Sendable, Hashable, CustomStringConvertible {
    /// The topic and partition.
    package var topicPartition: KafkaTopicPartition
    /// An offset in the partition; for commits, the next offset to read.
    package var offset: Int64

    /// An offset in the given partition.
    package init(_ topicPartition: KafkaTopicPartition, offset: Int64) {
        self.topicPartition = topicPartition
        self.offset = offset
    }

    /// An offset in partition `partition` of `topic`.
    package init(topic: String, partition: Int32, offset: Int64) {
        self.init(KafkaTopicPartition(topic: topic, partition: partition), offset: offset)
    }

    /// The topic's name.
    package var topic: String {
        get { topicPartition.topic }
        set { topicPartition.topic = newValue }
    }

    /// The partition's number.
    package var partition: Int32 {
        get { topicPartition.partition }
        set { topicPartition.partition = newValue }
    }

    /// `topic[partition]@offset`, for example `notifications[3]@42`.
    package var description: String { "\(topicPartition)@\(offset)" }
}
