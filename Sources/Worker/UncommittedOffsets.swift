import KafkaClient

/// Offsets of stored batches whose commit failed (a rebalance in progress, the coordinator moving), to commit again.
///
/// The consumer does not hand a stored batch out again by itself, so without another commit its partition would
/// show the batch as lag, and redeliver it after the next rebalance, until a later batch of the partition commits.
struct UncommittedOffsets {
    private var offsets: [KafkaTopicPartition: Int64] = [:]
    private var nextAttempt = ContinuousClock.now
    private let retryInterval: Duration = .milliseconds(500)

    /// Records what a stored batch committed, or failed to.
    mutating func record(_ offset: KafkaTopicPartitionOffset, committed: Bool) {
        let partition = offset.topicPartition
        if committed {
            if let pending = offsets[partition], pending <= offset.offset { offsets[partition] = nil }
        } else {
            offsets[partition] = max(offsets[partition] ?? offset.offset, offset.offset)
        }
    }

    /// Commits the pending offsets of `partitions` (all pending ones due, when nil); keeps them if it fails again.
    mutating func commit(
        _ partitions: Set<KafkaTopicPartition>? = nil,
        with consumer: KafkaConsumer,
        force: Bool = false
    ) async {
        let due = offsets.filter { partitions?.contains($0.key) ?? true }
        guard !due.isEmpty, force || ContinuousClock.now >= nextAttempt else { return }
        do {
            try await consumer.commit(due.map { KafkaTopicPartitionOffset($0.key, offset: $0.value) })
            for (partition, offset) in due where offsets[partition] == offset { offsets[partition] = nil }
        } catch {
            nextAttempt = ContinuousClock.now.advanced(by: retryInterval)
        }
    }

    /// Forgets `partitions` (lost or handed over).
    mutating func forget(_ partitions: some Sequence<KafkaTopicPartition>) {
        for partition in partitions { offsets[partition] = nil }
    }
}
