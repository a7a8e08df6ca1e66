import KafkaClient
import NotificationStore
import Synchronization

/// What became of one partition batch.
struct BatchOutcome: Sendable {
    /// A batch stored in PostgreSQL.
    struct Stored: Sendable {
        /// Its offset committed.
        var committed: Bool
        /// The outbox rows its write returned; nil when the write could not return them (they are read back).
        var outboxMessages: [OutboxMessage]?
    }

    var batch: PartitionBatch
    /// Nil: not stored, to be retried.
    var stored: Stored?
}

/// The partition batches being processed, at most one per partition so each partition stays in order, each in a
/// task of its own so partitions never wait for one another.
struct PartitionTasks {
    private var tasks: [KafkaTopicPartition: Task<BatchOutcome, Never>] = [:]
    private let finished = FinishedPartitions()

    /// Partitions with a batch in progress.
    var busy: Set<KafkaTopicPartition> { Set(tasks.keys) }

    var isEmpty: Bool { tasks.isEmpty }

    /// Starts `work` on `batch`; its partition must not be busy.
    mutating func start(_ batch: PartitionBatch, _ work: @escaping @Sendable (PartitionBatch) async -> BatchOutcome) {
        let finished = finished
        tasks[batch.partition] = Task {
            let outcome = await work(batch)
            finished.add(batch.partition)
            return outcome
        }
    }

    /// The outcomes of the batches that ended since the last call; does not wait for the others.
    mutating func takeFinished() async -> [BatchOutcome] {
        await wait(for: finished.take())
    }

    /// Waits for the batches of `partitions` in progress.
    mutating func wait(for partitions: some Sequence<KafkaTopicPartition>) async -> [BatchOutcome] {
        var outcomes: [BatchOutcome] = []
        for partition in partitions {
            if let task = tasks.removeValue(forKey: partition) { outcomes.append(await task.value) }
        }
        return outcomes
    }

    /// Waits for every batch in progress.
    mutating func waitForAll() async -> [BatchOutcome] {
        await wait(for: Array(tasks.keys))
    }
}

/// Partitions whose task ended, reported from the tasks.
private final class FinishedPartitions: Sendable {
    private let partitions = Mutex<Set<KafkaTopicPartition>>([])

    func add(_ partition: KafkaTopicPartition) {
        partitions.withLock { _ = $0.insert(partition) }
    }

    func take() -> Set<KafkaTopicPartition> {
        partitions.withLock { partitions in
            defer { partitions = [] }
            return partitions
        }
    }
}
