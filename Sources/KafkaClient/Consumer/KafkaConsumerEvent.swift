/// What a ``KafkaConsumer`` poll yields, in the order it happened.
package enum KafkaConsumerEvent: Sendable {
    /// Messages fetched for partitions this member owns, in offset order within each partition.
    case messages([KafkaMessage])
    /// The group gave this member partitions. Their messages follow, from the committed offset (or from
    /// ``KafkaConsumerConfiguration/startWithoutCommittedOffset`` when none is committed).
    case partitionsAssigned([KafkaTopicPartition])
    /// The group takes partitions away from this member. They stay assigned until the member asks for its next
    /// event: finish (and commit) or abandon their in-flight work first. See ``KafkaPartitionRevocation``.
    case partitionsRevoked(KafkaPartitionRevocation)
    /// Messages of an owned partition were skipped because the partition no longer held them (deleted by
    /// retention before this group consumed them); consuming went on from the oldest message kept. Reported before
    /// the messages that follow the gap.
    case offsetGap(KafkaOffsetGap)
}

/// Partitions the group takes away from a member.
package struct KafkaPartitionRevocation: Sendable, Hashable {
    /// The partitions taken away (all of them with an eager protocol, only the moving ones with cooperative-sticky).
    package var partitions: [KafkaTopicPartition]
    /// The member lost them rather than gave them up: it was thrown out of the group (missed heartbeats, a poll
    /// interval exceeded), so another member may already own them. Commits for them will fail with
    /// ``KafkaError/Code/rebalanced``; abandon their work.
    package var isLost: Bool

    /// A revocation of `partitions`.
    package init(partitions: [KafkaTopicPartition], isLost: Bool) {
        self.partitions = partitions
        self.isLost = isLost
    }
}
