/// A partition's claim by a writer (``NotificationStore/claim(_:)``): the epoch its batches carry, and how far the
/// database holds the partition.
package struct PartitionClaim: Sendable, Hashable {
    /// The epoch of the claim: the writer's batches of the partition carry it (``PartitionFence``).
    package var epoch: Int64
    /// The offset after the last message of the partition the database stored (`stored_through_offset`); 0 when the
    /// database holds no notification at all (a new one, or one restored to empty). Nil when unknown: the partition
    /// was not stored by a fenced writer since the table was made (an upgrade from before it) and the database holds
    /// notifications.
    package var storedThroughOffset: Int64?

    /// A claim of `epoch`, the database holding the partition through `storedThroughOffset`.
    package init(epoch: Int64, storedThroughOffset: Int64?) {
        self.epoch = epoch
        self.storedThroughOffset = storedThroughOffset
    }
}
