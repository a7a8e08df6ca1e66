import KafkaClient

/// One partition's messages taken together, in offset order, and how often they failed.
struct PartitionBatch: Sendable {
    var partition: KafkaTopicPartition
    var messages: [KafkaMessage]
    var attempts = 0

    /// The offset to commit once the batch is stored: after its last message.
    var nextOffset: KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(partition, offset: (messages.last?.offset ?? -1) + 1)
    }
}

/// The messages handed out per partition and not yet taken for a batch, with each failed partition's backoff.
///
/// A failed partition keeps its messages (and receives no new ones: it is paused) until its backoff passes; then the
/// same messages, plus any that arrived before the pause took effect, are tried again. A partition whose batches
/// fall behind is paused too, so messages waiting in memory stay bounded.
struct PartitionQueues {
    private struct Queue {
        var messages: [KafkaMessage] = []
        var attempts = 0
        var retryAt: ContinuousClock.Instant?
        /// When the oldest message in the queue arrived.
        var since = ContinuousClock.now
    }

    private let configuration: WorkerConfiguration
    private var queues: [KafkaTopicPartition: Queue] = [:]
    private var paused: Set<KafkaTopicPartition> = []

    init(configuration: WorkerConfiguration) {
        self.configuration = configuration
    }

    /// The partitions with messages in hand.
    var partitions: [KafkaTopicPartition] { Array(queues.keys) }

    /// Keeps `messages` until their partition's next batch. They are detached from their poll's shared buffer:
    /// partitions move at different speeds, and a few messages of many polls would otherwise keep every one of those
    /// polls' bytes in memory.
    mutating func append(_ messages: [KafkaMessage]) {
        for message in messages {
            queues[message.topicPartition, default: Queue()].messages.append(message.detached())
        }
    }

    /// Takes a batch (at most ``WorkerConfiguration/maximumBatchSize`` messages, the oldest) of each partition that
    /// is neither `busy` nor waiting out a backoff, as long as fewer than
    /// ``WorkerConfiguration/maximumConcurrentBatches`` are in progress; the partitions that waited longest first.
    mutating func takeReady(excluding busy: Set<KafkaTopicPartition>) -> [PartitionBatch] {
        let now = ContinuousClock.now
        var batches: [PartitionBatch] = []
        let free = configuration.maximumConcurrentBatches - busy.count
        let ready = queues.filter { partition, queue in
            !busy.contains(partition) && !queue.messages.isEmpty && (queue.retryAt.map { $0 <= now } ?? true)
        }
        // Oldest first message first, so no partition waits behind the others for long.
        let chosen = ready.sorted { ($0.value.since, $0.key) < ($1.value.since, $1.key) }.prefix(max(0, free))
        for (partition, queue) in chosen {
            let count = min(queue.messages.count, configuration.maximumBatchSize)
            batches.append(
                PartitionBatch(
                    partition: partition,
                    messages: Array(queue.messages.prefix(count)),
                    attempts: queue.attempts
                )
            )
            if count == queue.messages.count {
                queues[partition] = nil
            } else {
                queues[partition] = Queue(messages: Array(queue.messages.dropFirst(count)), since: now)
            }
        }
        return batches
    }

    /// Takes everything queued for `partitions` (waiting out a backoff or not), one batch each.
    mutating func take(_ partitions: [KafkaTopicPartition]) -> [PartitionBatch] {
        partitions.compactMap { partition in
            guard let queue = queues.removeValue(forKey: partition), !queue.messages.isEmpty else { return nil }
            return PartitionBatch(partition: partition, messages: queue.messages, attempts: queue.attempts)
        }
    }

    /// Puts a failed batch back in front of whatever arrived since, with its next backoff.
    mutating func requeue(_ batch: PartitionBatch) {
        let attempts = batch.attempts + 1
        var queue = queues[batch.partition] ?? Queue()
        queue.messages = batch.messages + queue.messages
        queue.attempts = attempts
        queue.retryAt = ContinuousClock.now.advanced(by: backoff(attempts: attempts))
        queues[batch.partition] = queue
    }

    /// Forgets `partitions` (revoked or lost).
    mutating func drop(_ partitions: [KafkaTopicPartition]) {
        for partition in partitions {
            queues[partition] = nil
            paused.remove(partition)
        }
    }

    /// Pauses partitions that are waiting out a backoff or hold more than their share of messages in memory (two
    /// polls' worth over all owned partitions), resumes the rest: memory stays bounded however many partitions a
    /// member owns and however slow one of them is.
    mutating func applyPauses(_ consumer: KafkaConsumer) async throws(KafkaError) {
        let limit = max(16, 2 * configuration.maximumBatchSize / max(1, consumer.assignment.count))
        let waiting = Set(queues.filter { $0.value.retryAt != nil || $0.value.messages.count >= limit }.keys)
        let toPause = waiting.subtracting(paused).filter { consumer.assignment.contains($0) }
        let toResume = paused.subtracting(waiting)
        if !toPause.isEmpty { try await consumer.pause(Array(toPause)) }
        if !toResume.isEmpty { try await consumer.resume(Array(toResume)) }
        paused = paused.union(toPause).subtracting(toResume)
    }

    /// Exponential in the attempts, capped, with ±25% jitter so workers do not retry in step.
    private func backoff(attempts: Int) -> Duration {
        let base = configuration.initialBackoff * (1 << min(attempts - 1, 16))
        let capped = min(base, configuration.maximumBackoff)
        return capped * Double.random(in: 0.75...1.25)
    }
}
