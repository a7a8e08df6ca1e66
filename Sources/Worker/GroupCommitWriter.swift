import KafkaClient
import Logging
import NotificationStore
import Prometheus
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Stores the partition batches verified at about the same time in one transaction (group commit). It commits no
/// Kafka offset: each batch's caller learns that it is stored, and the worker's ``Worker/StateMachine`` commits the
/// offsets of the batches that ended together in one call (``Worker/StateMachine/Action/commit(_:)``).
///
/// A transaction's fixed costs — BEGIN and its settings, COMMIT and its WAL flush, the statement's execution, the
/// hand-offs between threads — are then shared by every partition batch that became ready while the previous
/// transaction ran. At low load each batch is written alone as soon as it is verified; under
/// load transactions grow instead of queueing (at 1,500 notifications/s, partition batches of about 11 messages had
/// each paid for a transaction of their own).
///
/// With an `interval` (``WorkerConfiguration/transactionInterval``, 200 ms by default) a lane starts its next
/// transaction no sooner than that after it started the previous one, unless a batch waiting is of a partition that is
/// behind (it left messages queued: waiting would only slow it down) or the batches waiting already hold
/// `maximumMessages`: batches verified meanwhile wait and join it, and the partitions' next batches grow meanwhile.
/// With 0, transactions run as often as the database answers, about 20 a second per worker at 2,250 notifications/s,
/// each of 3–4 partition batches, and every transaction's fixed costs in the worker (statements, round trips, the
/// offset commit and the outbox publication that follow it, the hand-offs between threads around each) come to a tenth
/// of its CPU (Docs/benchmarks.md). At low load nothing waits: a batch that arrives when the last transaction started
/// longer than `interval` ago is written at once.
///
/// At most `lanes` transactions run at once, each taking every batch waiting (up to `maximumMessages` together,
/// unless one batch alone is larger). The callers keep what per-partition batches promise: a partition has at most
/// one batch in flight (``Worker/StateMachine``), so a transaction holds at most one batch of each partition and order
/// within a partition holds; a failed transaction fails each of its batches, to be retried like any failed batch (one
/// refused by the ownership fence names the partitions another member claimed since: only their batches are not to be
/// retried).
/// A lane's transaction waits at most ``lockTimeout`` for a lock, and a batch that failed before is written outside
/// the lanes, in a transaction and on a connection of its own: one stuck subscription holds up the others once, that
/// long, and from then on only its own partition.
///
/// Which batches a transaction takes and when it starts is decided by ``StateMachine``; this class keeps the batches'
/// callers, runs the transactions and performs the machine's actions.
final class GroupCommitWriter: Sendable {
    /// What became of one partition batch: stored.
    struct Written: Sendable {
        /// The outbox rows its part of the write returned; nil when they must be read back (dead letters).
        var outboxMessages: [OutboxMessage]?
    }

    /// How long a lane's transaction waits for a lock; long waits are rare (a retention drop, another writer on the
    /// same rows during a rebalance), and then the batches are written again apart.
    static let lockTimeout: Duration = .seconds(2)

    /// A batch handed in, and its caller.
    private struct Waiter: Sendable {
        var batch: NotificationBatch
        var partition: KafkaTopicPartition
        var continuation: CheckedContinuation<Result<Written, NotificationStoreError>, Never>
    }

    /// A transaction the machine started, for ``run()`` to run.
    private struct Transaction: Sendable {
        var lane: Int
        var batches: [Waiter]
    }

    private struct State {
        var machine: StateMachine
        /// The callers of the batches not yet answered.
        var waiters: [StateMachine.Ticket: Waiter] = [:]
        /// Transactions started and not yet taken by ``run()``, and ``run()`` waiting for one.
        var started: [Transaction] = []
        var runner: CheckedContinuation<Transaction?, Never>?

        /// Tells the machine of an event and records its actions; returns what is to be done outside the lock.
        mutating func handle(_ event: (inout StateMachine) -> [StateMachine.Action]) -> Effects {
            let actions = event(&machine)
            return apply(actions)
        }

        /// Records `actions`, and returns what is to be done outside the lock.
        mutating func apply(_ actions: [StateMachine.Action]) -> Effects {
            var effects = Effects()
            for action in actions {
                switch action {
                case .write(let lane, let tickets):
                    // The callers stay until the transaction's end answers them.
                    started.append(Transaction(lane: lane, batches: tickets.map { waiters[$0]! }))
                case .answer(let tickets, let answer):
                    for ticket in tickets {
                        guard let waiter = waiters.removeValue(forKey: ticket) else { continue }
                        effects.answers.append((waiter, answer))
                    }
                case .wakeUp(let at):
                    effects.wakeUps.append(at)
                }
            }
            if let runner, !started.isEmpty || machine.isStopped {
                self.runner = nil
                effects.runner = (runner, started.isEmpty ? nil : started.removeFirst())
            }
            return effects
        }
    }

    /// What the machine's actions come to outside the lock.
    private struct Effects: Sendable {
        var answers: [(Waiter, StateMachine.Answer)] = []
        var wakeUps: [ContinuousClock.Instant] = []
        var runner: (CheckedContinuation<Transaction?, Never>, Transaction?)?
    }

    private let store: NotificationStore
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let state: Mutex<State>

    /// - Parameters:
    ///   - interval: the shortest time between the starts of one lane's transactions, unless a partition waiting is
    ///     behind or `maximumMessages` wait.
    init(
        store: NotificationStore,
        lanes: Int,
        maximumMessages: Int,
        interval: Duration = .zero,
        metrics: WorkerMetrics,
        logger: Logger
    ) {
        self.store = store
        self.metrics = metrics
        self.logger = logger
        self.state = Mutex(
            State(machine: StateMachine(lanes: lanes, maximumMessages: maximumMessages, interval: interval))
        )
    }

    /// Writes transactions until cancelled; batches handed in after that fail as
    /// ``NotificationStoreError/Code/shutDown``. Returns once the transactions running then ended.
    func run() async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                perform(state.withLock { $0.handle { $0.start(now: .now) } })
                while let transaction = await nextTransaction() {
                    group.addTask { await self.write(transaction) }
                }
            }
        } onCancel: {
            perform(state.withLock { $0.handle { $0.stop() } })
        }
    }

    /// Stores `batch`, the verified messages of `partition`; returns once its transaction committed. Its offset is
    /// the caller's to commit.
    ///
    /// - Parameters:
    ///   - alone: write it in a transaction of its own, outside the lanes, with no lock timeout but the store's
    ///     operation timeout (it failed before).
    ///   - isBehind: its partition left messages queued: its transaction starts without waiting out the interval.
    /// - Throws: the store's error for the transaction it was in; nothing of it was written then (see
    ///   ``NotificationStore/write(_:lockTimeout:)``).
    func write(
        _ batch: NotificationBatch,
        of partition: KafkaTopicPartition,
        alone: Bool,
        isBehind: Bool = false
    ) async throws(NotificationStoreError) -> Written {
        if alone {
            let result = try await storeTransaction(batch, partitions: [partition], lockTimeout: nil)
            return Written(outboxMessages: result.outboxMessages)
        }
        let result = await withCheckedContinuation { continuation in
            let waiter = Waiter(batch: batch, partition: partition, continuation: continuation)
            perform(
                state.withLock { state in
                    let (ticket, actions) = state.machine.submit(
                        messages: batch.entries.count,
                        isBehind: isBehind,
                        now: .now
                    )
                    state.waiters[ticket] = waiter
                    return state.apply(actions)
                }
            )
        }
        return try result.get()
    }

    /// Batches handed in and not yet taken by a transaction.
    var waitingBatches: Int { state.withLock { $0.machine.waitingBatches } }

    /// Lanes waiting for the interval since their last transaction's start to pass, with batches waiting.
    var pausingLanes: Int { state.withLock { $0.machine.pausingLanes } }

    private static let stopped = NotificationStoreError(code: .shutDown, reason: "the worker's writer has stopped")

    /// The next transaction the machine started; nil once it stopped and every one was taken.
    private func nextTransaction() async -> Transaction? {
        await withCheckedContinuation { continuation in
            perform(
                state.withLock { state in
                    state.runner = continuation
                    return state.apply([])
                }
            )
        }
    }

    /// Performs what the machine's actions came to; `outcome` is the transaction's whose end they follow, if any.
    private func perform(
        _ effects: Effects,
        outcome: Result<BatchWriteResult, NotificationStoreError>? = nil
    ) {
        let messages = (try? outcome?.get())?.outboxMessagesByPartition()
        for (waiter, answer) in effects.answers {
            switch (answer, outcome) {
            case (.written, .some(.success)):
                let written = Written(outboxMessages: messages.map { $0[waiter.partition] ?? [] })
                waiter.continuation.resume(returning: .success(written))
            case (.failed, .some(.failure(let error))):
                waiter.continuation.resume(returning: .failure(error))
            case (.stopped, _):
                waiter.continuation.resume(returning: .failure(Self.stopped))
            default:
                preconditionFailure("answered \(answer) without a transaction that ended so")
            }
        }
        for at in effects.wakeUps {
            // One timer per wait for an interval, at most one per transaction: a few a second.
            Task {
                try? await Task.sleep(until: at)
                self.perform(self.state.withLock { $0.handle { $0.wakeUp(now: .now) } })
            }
        }
        if let (runner, transaction) = effects.runner { runner.resume(returning: transaction) }
    }

    /// One transaction for `transaction`'s batches; then its lane takes the next, and each batch's caller gets its
    /// part.
    private func write(_ transaction: Transaction) async {
        let group = transaction.batches
        let batch =
            group.count == 1
            ? group[0].batch
            : NotificationBatch(entries: group.flatMap(\.batch.entries), fences: group.flatMap(\.batch.fences))
        let outcome: Result<BatchWriteResult, NotificationStoreError>
        do {
            outcome = .success(
                try await storeTransaction(batch, partitions: group.map(\.partition), lockTimeout: Self.lockTimeout)
            )
        } catch {
            outcome = .failure(error)
        }
        let succeeded = (try? outcome.get()) != nil
        perform(
            state.withLock { $0.handle { $0.writeEnded(lane: transaction.lane, succeeded: succeeded, now: .now) } },
            outcome: outcome
        )
    }

    /// Stores `batch`, the batches of `partitions` together, in one transaction.
    private func storeTransaction(
        _ batch: NotificationBatch,
        partitions: [KafkaTopicPartition],
        lockTimeout: Duration?
    ) async throws(NotificationStoreError) -> BatchWriteResult {
        let start = ContinuousClock.now
        let result = try await store.write(batch, lockTimeout: lockTimeout)
        metrics.recordStored(batch, newlyStored: result.storedNotifications, storedAt: Date())
        metrics.storeDuration.record(start.duration(to: .now))
        metrics.transactionBatches.record(Double(partitions.count))
        count(batch, result, partitions: partitions)
        return result
    }

    private func count(_ batch: NotificationBatch, _ result: BatchWriteResult, partitions: [KafkaTopicPartition]) {
        metrics.storedMessages.increment(by: Int64(batch.entries.count))
        metrics.newNotifications.increment(by: Int64(result.storedNotifications.count))
        metrics.duplicateNotifications.increment(by: Int64(result.duplicateNotifications))
        var rejected: [String: Int] = [:]
        for entry in batch.entries {
            if case .rejected(let status, _) = entry.verdict { rejected[status, default: 0] += 1 }
        }
        for (status, count) in rejected { metrics.countRejected(status: status, count: count) }
        logger.debug(
            "Batches stored",
            metadata: [
                "kafka.partitions": "\(partitions)",
                "batch.size": "\(batch.entries.count)",
                "notifications.new": "\(result.storedNotifications.count)",
                "notifications.duplicate": "\(result.duplicateNotifications)",
                "rejected.new": "\(result.storedRejections)",
            ]
        )
    }
}

extension BatchWriteResult {
    /// ``outboxMessages`` by the raw-topic partition their rows came from; nil when they must be read back.
    fileprivate func outboxMessagesByPartition() -> [KafkaTopicPartition: [OutboxMessage]]? {
        guard let outboxMessages else { return nil }
        // The messages are made from ``outbox``, one each, in the same order.
        var byPartition: [KafkaTopicPartition: [OutboxMessage]] = [:]
        for (entry, message) in zip(outbox, outboxMessages) {
            byPartition[entry.source, default: []].append(message)
        }
        return byPartition
    }
}
