import KafkaClient

/// A raw-topic partition whose batch a write stores, with the epoch of the claim that made the writer its owner
/// (``NotificationStore/claim(_:)``): the write stores nothing unless that claim is still the partition's latest, and
/// the database still holds what the writer knows was stored before the batch.
package struct PartitionFence: Sendable, Hashable {
    /// The partition.
    package var partition: KafkaTopicPartition
    /// The epoch the writer's claim returned.
    package var epoch: Int64
    /// The offset after the batch's last message of the partition (the offset it commits): recorded as the
    /// partition's `stored_through_offset` unless a higher one is.
    package var nextOffset: Int64
    /// The offset the database must hold the partition through already: what the writer stored last, or the group's
    /// committed offset it resumed from. Lower in the database means it was restored to an earlier point since
    /// (``NotificationStoreError/Code/storedOffsetBehind``). Nil: nothing to check (no offset known).
    package var storedThroughOffset: Int64?

    /// Creates a fence.
    package init(partition: KafkaTopicPartition, epoch: Int64, nextOffset: Int64, storedThroughOffset: Int64? = nil) {
        self.partition = partition
        self.epoch = epoch
        self.nextOffset = nextOffset
        self.storedThroughOffset = storedThroughOffset
    }
}
