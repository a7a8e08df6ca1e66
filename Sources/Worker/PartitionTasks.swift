import KafkaClient
import Synchronization

/// The tasks of the partition batches in flight, one per partition (``Worker/StateMachine`` starts at most one: a
/// batch's verification, then its write), so partitions never wait for one another.
struct PartitionTasks {
    private var tasks: [KafkaTopicPartition: (id: Int, task: Task<BatchOutcome, Never>)] = [:]
    private var nextID = 0
    private let finished = FinishedTasks()

    /// Starts `work` on `batch`; its partition must have no task.
    mutating func start(_ batch: PartitionBatch, _ work: @escaping @Sendable (PartitionBatch) async -> BatchOutcome) {
        precondition(tasks[batch.partition] == nil, "two tasks of \(batch.partition) at once")
        let finished = finished
        let id = nextID
        nextID += 1
        tasks[batch.partition] = (
            id,
            Task {
                let outcome = await work(batch)
                finished.add(id)
                return outcome
            }
        )
    }

    /// The outcomes of the batches that ended since the last call; does not wait for the others.
    mutating func takeFinished() async -> [BatchOutcome] {
        let ended = finished.take()
        // A task already waited for by ``wait(for:)`` is gone, or replaced by a newer one of its partition.
        let partitions = tasks.filter { ended.contains($0.value.id) }.keys
        var outcomes: [BatchOutcome] = []
        for partition in partitions {
            if let outcome = await wait(for: partition) { outcomes.append(outcome) }
        }
        return outcomes
    }

    /// Waits for the batch of `partition` in flight, if any.
    mutating func wait(for partition: KafkaTopicPartition) async -> BatchOutcome? {
        guard let (_, task) = tasks.removeValue(forKey: partition) else { return nil }
        return await task.value
    }

    /// Waits for every batch in flight, discarding the outcomes (the run loop is failing).
    mutating func waitForAll() async {
        for partition in tasks.keys { _ = await wait(for: partition) }
    }
}

/// The ids of tasks that ended, reported from the tasks.
private final class FinishedTasks: Sendable {
    private let ids = Mutex<Set<Int>>([])

    func add(_ id: Int) {
        ids.withLock { _ = $0.insert(id) }
    }

    func take() -> Set<Int> {
        ids.takeAll()
    }
}
