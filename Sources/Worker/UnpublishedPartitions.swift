import KafkaClient

/// Partitions whose outbox may hold rows not yet published, and when to try them again.
struct UnpublishedPartitions {
    private var partitions: Set<KafkaTopicPartition> = []
    private var nextAttempt = ContinuousClock.now
    /// The pause between attempts while publishing fails (the broker down, say).
    private let retryInterval: Duration = .seconds(1)

    /// Whether there is something to publish and the last failure is long enough ago.
    var isDue: Bool { !partitions.isEmpty && ContinuousClock.now >= nextAttempt }

    /// Whether `partition` may have rows left to publish.
    func contains(_ partition: KafkaTopicPartition) -> Bool {
        partitions.contains(partition)
    }

    mutating func mark(_ partitions: some Sequence<KafkaTopicPartition>) {
        self.partitions.formUnion(partitions)
    }

    mutating func forget(_ partitions: some Sequence<KafkaTopicPartition>) {
        self.partitions.subtract(partitions)
    }

    /// Publishes the marked ones among `owned`; those that fail stay marked and wait a second.
    mutating func publish(_ owned: [KafkaTopicPartition], with publisher: OutboxPublisher) async {
        for partition in owned where partitions.contains(partition) {
            if await publisher.publishPending(for: partition) {
                partitions.remove(partition)
            } else {
                nextAttempt = ContinuousClock.now.advanced(by: retryInterval)
            }
        }
    }
}
