/// How far a consumer group is behind on one partition.
package struct KafkaPartitionLag: Sendable, Hashable {
    /// The partition this lag is for.
    package var topicPartition: KafkaTopicPartition
    /// The group's committed offset (the next message it will read), nil if it never committed one.
    package var committedOffset: Int64?
    /// The oldest offset the partition still holds.
    package var lowWatermark: Int64
    /// The offset the next produced message will get.
    package var highWatermark: Int64

    /// The lag of one partition from the group's committed offset and the partition's watermarks.
    package init(
        topicPartition: KafkaTopicPartition,
        committedOffset: Int64?,
        lowWatermark: Int64,
        highWatermark: Int64
    ) {
        self.topicPartition = topicPartition
        self.committedOffset = committedOffset
        self.lowWatermark = lowWatermark
        self.highWatermark = highWatermark
    }

    /// Messages the group has yet to commit: from its committed offset (or, with none, the oldest message kept) to the
    /// high watermark.
    package var lag: Int64 {
        max(0, highWatermark - max(committedOffset ?? lowWatermark, lowWatermark))
    }
}
