import KafkaClient
import Logging
import NotificationStore
import Prometheus
import Synchronization

/// Stores the partition batches verified at about the same time in one transaction, and commits their offsets in one
/// call (group commit).
///
/// A transaction's fixed costs — BEGIN and its settings, COMMIT and its WAL flush, the statement's execution, the
/// offset commit's round trip, the hand-offs between threads — are then shared by every partition batch that became
/// ready while the previous transaction ran. At low load each batch is written alone as soon as it is verified; under
/// load transactions grow instead of queueing (at 1,500 notifications/s, partition batches of about 11 messages had
/// each paid for a transaction of their own).
///
/// With an `interval` (``WorkerConfiguration/transactionInterval``, 200 ms by default) a lane starts its next
/// transaction no sooner than that after it started the previous one, unless a batch waiting is of a partition that is
/// behind (it left messages queued: waiting would only slow it down) or the batches waiting already hold
/// `maximumMessages`: batches verified meanwhile wait and join it, and the partitions' next batches grow meanwhile.
/// With 0, transactions run as often as the database answers, about 20 a second per worker at 2,250 notifications/s,
/// each of 3–4 partition batches, and every transaction's fixed costs in the worker (statements, round trips, the
/// offset commit, the outbox publication that follows it, the hand-offs between threads around each) come to a tenth of
/// its CPU (Docs/benchmarks.md). At low load nothing waits: a batch that arrives when the last transaction started
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
final class GroupCommitWriter: Sendable {
    /// What became of one partition batch.
    struct Written: Sendable {
        /// Its offset committed.
        var committed: Bool
        /// The outbox rows its part of the write returned; nil when they must be read back (dead letters).
        var outboxMessages: [OutboxMessage]?
    }

    /// How long a lane's transaction waits for a lock; long waits are rare (a retention drop, another writer on the
    /// same rows during a rebalance), and then the batches are written again apart.
    static let lockTimeout: Duration = .seconds(2)

    private struct Pending: Sendable {
        var batch: NotificationBatch
        var offset: KafkaTopicPartitionOffset
        var continuation: CheckedContinuation<Result<Written, NotificationStoreError>, Never>
        var isBehind: Bool
    }

    private struct State {
        var pending: [Pending] = []
        var idleLanes: [CheckedContinuation<Bool, Never>] = []
        /// Lanes pausing before their next transaction, by pause: resumed when it should start now (``startsNow``),
        /// their pause is over, or the writer stops.
        var pausedLanes: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextPause = 0
        var stopped = false

        /// Whether the next transaction should start without waiting out the interval: a partition waiting is behind,
        /// or the waiting batches make a whole transaction.
        func startsNow(maximumMessages: Int) -> Bool {
            pending.contains(where: \.isBehind) || pending.reduce(0) { $0 + $1.batch.entries.count } >= maximumMessages
        }
    }

    private let store: NotificationStore
    private let lanes: Int
    private let maximumMessages: Int
    private let interval: Duration
    private let commit: @Sendable ([KafkaTopicPartitionOffset]) async throws -> Void
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let state = Mutex(State())

    /// - Parameters:
    ///   - interval: the shortest time between the starts of one lane's transactions, unless a partition waiting is
    ///     behind or `maximumMessages` wait.
    ///   - commit: commits the stored batches' offsets (the consumer's commit).
    init(
        store: NotificationStore,
        lanes: Int,
        maximumMessages: Int,
        interval: Duration = .zero,
        metrics: WorkerMetrics,
        logger: Logger,
        commit: @escaping @Sendable ([KafkaTopicPartitionOffset]) async throws -> Void
    ) {
        self.store = store
        self.lanes = max(1, lanes)
        self.maximumMessages = max(1, maximumMessages)
        self.interval = max(.zero, interval)
        self.metrics = metrics
        self.logger = logger
        self.commit = commit
    }

    /// Writes transactions until cancelled; batches handed in after that fail as
    /// ``NotificationStoreError/Code/shutDown``.
    func run() async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for _ in 0..<lanes {
                    group.addTask { await self.runLane() }
                }
            }
        } onCancel: {
            stop()
        }
    }

    /// Stores `batch` (one partition's, verified) and commits `offset` once its transaction committed.
    ///
    /// - Parameters:
    ///   - alone: write it in a transaction of its own, outside the lanes, with no lock timeout but the store's
    ///     operation timeout (it failed before).
    ///   - isBehind: its partition left messages queued: its transaction starts without waiting out the interval.
    /// - Throws: the store's error for the transaction it was in; nothing of it was written then (see
    ///   ``NotificationStore/write(_:lockTimeout:)``).
    func write(
        _ batch: NotificationBatch,
        committing offset: KafkaTopicPartitionOffset,
        alone: Bool,
        isBehind: Bool = false
    ) async throws(NotificationStoreError) -> Written {
        if alone {
            let (result, committed) = try await storeAndCommit(
                batch,
                committing: [offset],
                batches: 1,
                lockTimeout: nil
            )
            return Written(committed: committed, outboxMessages: result.outboxMessages)
        }
        let result = await withCheckedContinuation { continuation in
            let pending = Pending(batch: batch, offset: offset, continuation: continuation, isBehind: isBehind)
            let (accepted, lane, paused) = state.withLock {
                state -> (Bool, CheckedContinuation<Bool, Never>?, [CheckedContinuation<Void, Never>]) in
                guard !state.stopped else { return (false, nil, []) }
                state.pending.append(pending)
                guard state.startsNow(maximumMessages: maximumMessages) else {
                    return (true, state.idleLanes.popLast(), [])
                }
                defer { state.pausedLanes = [:] }
                return (true, state.idleLanes.popLast(), Array(state.pausedLanes.values))
            }
            if !accepted { continuation.resume(returning: .failure(Self.stopped)) }
            lane?.resume(returning: true)
            for lane in paused { lane.resume() }
        }
        return try result.get()
    }

    /// Batches handed in and not yet taken by a transaction.
    var waitingBatches: Int { state.withLock { $0.pending.count } }

    /// Lanes waiting for the interval since their last transaction's start to pass, with batches waiting.
    var pausingLanes: Int { state.withLock { $0.pausedLanes.count } }

    private static let stopped = NotificationStoreError(code: .shutDown, reason: "the worker's writer has stopped")

    private func stop() {
        let (lanes, paused, pending) = state.withLock { state in
            state.stopped = true
            defer {
                state.idleLanes = []
                state.pausedLanes = [:]
                state.pending = []
            }
            return (state.idleLanes, state.pausedLanes.values, state.pending)
        }
        for lane in lanes { lane.resume(returning: false) }
        for lane in paused { lane.resume() }
        for batch in pending { batch.continuation.resume(returning: .failure(Self.stopped)) }
    }

    private func runLane() async {
        var notBefore = ContinuousClock.now
        while let group = await nextGroup(notBefore: notBefore) {
            notBefore = .now + interval
            await write(group)
        }
    }

    /// The batches of the next transaction, waiting for one to be handed in and, unless one is behind or they make a
    /// whole transaction, until `notBefore`; nil once stopped.
    private func nextGroup(notBefore: ContinuousClock.Instant) async -> [Pending]? {
        enum Next {
            case stopped, group([Pending]), idle, early
        }
        while true {
            let next = state.withLock { state -> Next in
                if state.stopped { return .stopped }
                if state.pending.isEmpty { return .idle }
                guard ContinuousClock.now >= notBefore || state.startsNow(maximumMessages: maximumMessages)
                else { return .early }
                return .group(Self.takeGroup(from: &state.pending, maximumMessages: maximumMessages))
            }
            switch next {
            case .stopped:
                return nil
            case .group(let group):
                return group
            case .early:
                await pause(until: notBefore)
            case .idle:
                let woken = await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state -> Bool? in
                        if state.stopped { return false }
                        if !state.pending.isEmpty { return true }
                        state.idleLanes.append(continuation)
                        return nil
                    }
                    if let resumeNow { continuation.resume(returning: resumeNow) }
                }
                if !woken { return nil }
            }
        }
    }

    /// Waits until `deadline`, or until a batch that is behind or a whole transaction's worth waits, or the writer
    /// stops.
    private func pause(until deadline: ContinuousClock.Instant) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let pause = state.withLock { state -> Int? in
                guard !state.stopped, !state.startsNow(maximumMessages: maximumMessages) else { return nil }
                state.nextPause += 1
                state.pausedLanes[state.nextPause] = continuation
                return state.nextPause
            }
            guard let pause else { return continuation.resume() }
            // A timer per pause, at most one per transaction: a few a second.
            Task {
                try? await Task.sleep(until: deadline)
                state.withLock { $0.pausedLanes.removeValue(forKey: pause) }?.resume()
            }
        }
    }

    /// Takes the first waiting batch and every other that fits beside it, in the order they were handed in.
    private static func takeGroup(from pending: inout [Pending], maximumMessages: Int) -> [Pending] {
        guard let first = pending.first else { return [] }
        var group = [first]
        var messages = first.batch.entries.count
        var left: [Pending] = []
        for next in pending.dropFirst() {
            if messages + next.batch.entries.count <= maximumMessages {
                group.append(next)
                messages += next.batch.entries.count
            } else {
                left.append(next)
            }
        }
        pending = left
        return group
    }

    /// One transaction for `group`; each batch's caller gets its part.
    private func write(_ group: [Pending]) async {
        let batch =
            group.count == 1
            ? group[0].batch
            : NotificationBatch(entries: group.flatMap(\.batch.entries), fences: group.flatMap(\.batch.fences))
        do {
            let (result, committed) = try await storeAndCommit(
                batch,
                committing: group.map(\.offset),
                batches: group.count,
                lockTimeout: Self.lockTimeout
            )
            let messages = result.outboxMessagesByPartition()
            for pending in group {
                let written = Written(
                    committed: committed,
                    outboxMessages: messages.map { $0[pending.offset.topicPartition] ?? [] }
                )
                pending.continuation.resume(returning: .success(written))
            }
        } catch {
            for pending in group { pending.continuation.resume(returning: .failure(error)) }
        }
    }

    /// Stores `batch` in one transaction, then commits `offsets` in one call; whether they were committed.
    private func storeAndCommit(
        _ batch: NotificationBatch,
        committing offsets: [KafkaTopicPartitionOffset],
        batches: Int,
        lockTimeout: Duration?
    ) async throws(NotificationStoreError) -> (BatchWriteResult, committed: Bool) {
        let start = ContinuousClock.now
        let result = try await store.write(batch, lockTimeout: lockTimeout)
        metrics.storeDuration.record(start.duration(to: .now))
        metrics.transactionBatches.record(Double(batches))
        count(batch, result, partitions: offsets.map(\.topicPartition))
        do {
            try await commit(offsets)
            return (result, true)
        } catch {
            // Stored but not committed: the run loop commits the offsets again; should a partition move first, its
            // next owner gets the batch again and finds duplicates. Never a reason to store it twice.
            logger.notice(
                "Offsets not committed; committing them again shortly",
                metadata: ["error": "\(error)", "kafka.offsets": "\(offsets)"]
            )
            return (result, false)
        }
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
