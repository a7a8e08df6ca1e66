import KafkaClient

/// A raw-topic partition whose batch a write stores, with the epoch of the claim that made the writer its owner
/// (``NotificationStore/claim(_:)``): the write stores nothing unless that claim is still the partition's latest.
package struct PartitionFence: Sendable, Hashable {
    /// The partition.
    package var partition: KafkaTopicPartition
    /// The epoch the writer's claim returned.
    package var epoch: Int64
    /// The offset after the batch's last message of the partition (the offset it commits): recorded as the
    /// partition's `stored_through_offset` unless a higher one is.
    package var nextOffset: Int64

    /// Creates a fence.
    package init(partition: KafkaTopicPartition, epoch: Int64, nextOffset: Int64) {
        self.partition = partition
        self.epoch = epoch
        self.nextOffset = nextOffset
    }
}
