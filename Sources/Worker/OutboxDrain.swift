import KafkaClient
import Logging
import NotificationStore
import Synchronization

/// Publishes the outbox of the partitions this member owns, beside the poll loop: however slow or unreachable the
/// output brokers are, batches go on being stored and committed and the member stays in its group.
///
/// The poll loop tells the drain what it owns (``assign(_:)``, ``revoke(_:)``) and what its batches wrote
/// (``written(_:)``, ``mayHaveRows(_:)``); the drain publishes each partition's rows in order, one publication
/// per partition at a time: a table read in a task of its own, the rows batches wrote for several partitions
/// together. ``run()`` retries failed publications and, every sweep interval, looks for rows that reached the table
/// some other way (a previous owner finishing a batch after the partition moved), so nothing waits in the outbox for
/// a later failure to notice it.
final class OutboxDrain: Sendable {
    private struct State {
        var machine: StateMachine
        var tasks: [KafkaTopicPartition: Task<Void, Never>] = [:]
    }

    private let publisher: OutboxPublisher
    private let store: NotificationStore
    private let logger: Logger
    private let state: Mutex<State>

    init(configuration: WorkerConfiguration, publisher: OutboxPublisher, store: NotificationStore, logger: Logger) {
        self.publisher = publisher
        self.store = store
        self.logger = logger
        self.state = Mutex(
            State(
                machine: StateMachine(
                    retryInterval: configuration.outboxRetryInterval,
                    sweepInterval: configuration.outboxSweepInterval,
                    maximumConcurrentPublications: configuration.maximumConcurrentPublications,
                    now: .now
                )
            )
        )
    }

    /// Partitions now owned: whatever a previous owner left in their outbox is published.
    func assign(_ partitions: some Sequence<KafkaTopicPartition>) {
        state.withLock { $0.machine.assign(partitions, now: .now) }
        startDue()
    }

    /// Partitions no longer owned: returns once their running publications ended, so the next owner's do not
    /// overlap them (which could reorder events of one subscription).
    func revoke(_ partitions: some Sequence<KafkaTopicPartition>) async {
        let running = state.withLock { state in
            state.machine.revoke(partitions).compactMap { state.tasks[$0] }
        }
        for task in running { await task.value }
    }

    /// Stored batches' outbox rows by partition, as their writes returned them; nil when a write did not (read from
    /// the table). Hand over the batches that ended together at once: their rows go out in one publication.
    func written(_ batches: [(rows: [OutboxMessage]?, partition: KafkaTopicPartition)]) {
        state.withLock { state in
            for (rows, partition) in batches {
                if let rows {
                    state.machine.written(rows, for: partition, now: .now)
                } else {
                    state.machine.mayHaveRows([partition], now: .now)
                }
            }
        }
        startDue()
    }

    /// Rows of `partitions` may be in the table (a failed batch's COMMIT may have gone through).
    func mayHaveRows(_ partitions: some Sequence<KafkaTopicPartition>) {
        state.withLock { $0.machine.mayHaveRows(partitions, now: .now) }
        startDue()
    }

    /// Retries failed publications when due and sweeps for rows in the table; until cancelled.
    func run() async {
        while !Task.isCancelled {
            startDue()
            if let owned = state.withLock({ $0.machine.sweepIfDue(now: .now) }), !owned.isEmpty {
                await sweep(owned)
            }
            let deadline = state.withLock { $0.machine.nextDeadline(now: .now) }
            try? await Task.sleep(until: deadline, tolerance: .milliseconds(50))
        }
    }

    /// One last attempt at everything pending, without waiting out retries; returns when the publications ended.
    func finish() async {
        state.withLock { $0.machine.skipRetryWaits() }
        startDue()
        while let task = state.withLock({ $0.tasks.values.first }) { await task.value }
    }

    /// Starts the publications that are due: each table read in a task of its own, the rows written by batches of
    /// all partitions due together in one (one send, one delete: ``OutboxPublisher/publishWritten(_:)``).
    private func startDue() {
        state.withLock { state in
            var written: [(partition: KafkaTopicPartition, rows: [OutboxMessage])] = []
            for (partition, publication) in state.machine.nextPublications(now: .now) {
                switch publication {
                case .written(let rows):
                    written.append((partition, rows))
                case .table:
                    state.tasks[partition] = Task {
                        let outcome = await self.publisher.publishPending(for: partition)
                        self.finished([(partition, outcome)])
                    }
                }
            }
            guard !written.isEmpty else { return }
            let task = Task { [written] in
                self.finished(await self.publisher.publishWritten(written))
            }
            for (partition, _) in written { state.tasks[partition] = task }
        }
    }

    private func finished(_ outcomes: [(KafkaTopicPartition, StateMachine.Outcome)]) {
        state.withLock { state in
            for (partition, outcome) in outcomes {
                state.tasks[partition] = nil
                state.machine.finished(partition, outcome, now: .now)
            }
        }
        // Rows written meanwhile, or a partition that waited for a free place; a failed one waits for its retry.
        startDue()
    }

    /// Marks the owned partitions whose outbox holds rows (written by someone else, or left by a failure).
    private func sweep(_ owned: Set<KafkaTopicPartition>) async {
        for (topic, partitions) in Dictionary(grouping: owned, by: \.topic) {
            do {
                let found = try await store.partitionsWithPendingOutbox(
                    topic: topic,
                    partitions: partitions.map(\.partition)
                )
                mayHaveRows(found.map { KafkaTopicPartition(topic: topic, partition: $0) })
            } catch {
                logger.debug(
                    "Could not look for outbox rows",
                    metadata: ["error": "\(error)", "kafka.topic": "\(topic)"]
                )
            }
        }
    }
}
