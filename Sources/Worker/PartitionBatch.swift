import KafkaClient
import NotificationStore
import Tracing

/// One partition's messages taken together, in offset order, and how often they failed.
struct PartitionBatch: Sendable {
    var partition: KafkaTopicPartition
    var messages: [KafkaMessage]
    /// The epoch of its partition's claim by this member: the batch is stored only while it is the latest.
    var epoch: Int64
    var attempts = 0
    /// The offset the database must hold the partition through before this batch: the one after the member's last
    /// batch stored, or the group's committed offset it resumed from (nil: unknown, nothing checked). Less in the
    /// database means it was restored to an earlier point, and the batch is refused rather than skip the difference.
    var storedThroughOffset: Int64?
    /// Whether its partition had more messages waiting than the batch could take, or as many as it may hold (more
    /// then wait in Kafka): the partition is behind, and its transaction should not wait for others to join
    /// (``GroupCommitWriter``).
    var isBehind = false
    /// The batch's span while it is in flight, from its verification to its write's end (nil when tracing is off):
    /// the worker's, which the state machine carries along and never reads.
    var span: (any Span)?

    /// The offset to commit once the batch is stored: after its last message.
    var nextOffset: KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(partition, offset: (messages.last?.offset ?? -1) + 1)
    }

    /// What the batch's write must check first: that its claim is still its partition's latest, and that the
    /// database holds what came before it.
    var fence: PartitionFence {
        PartitionFence(
            partition: partition,
            epoch: epoch,
            nextOffset: nextOffset.offset,
            storedThroughOffset: storedThroughOffset
        )
    }
}

/// What became of one partition batch.
struct BatchOutcome: Sendable {
    /// A batch stored in PostgreSQL (its offset is for the state machine to commit).
    struct Stored: Sendable {
        /// The outbox rows its write returned; nil when the write could not return them (they are read back).
        var outboxMessages: [OutboxMessage]?
    }

    var batch: PartitionBatch
    /// Verified into these notifications, not yet written: its write is next
    /// (``Worker/StateMachine/Action/writeBatch(_:_:)``).
    var verified: NotificationBatch?
    /// Nil: not stored, to be retried (unless ``verified``, ``notOwned`` or ``storedBehind``).
    var stored: Stored?
    /// Not stored because another member claimed the partition since this one did: not to be retried as it is.
    var notOwned = false
    /// Not stored because the database holds the partition through less than the batch's
    /// ``PartitionBatch/storedThroughOffset`` (restored to an earlier point): the partition is to be claimed again,
    /// which tells how far the database holds it, and rewound there.
    var storedBehind = false
}
