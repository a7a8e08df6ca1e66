import AppStoreModels
import AppStoreVerification
import Foundation
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import Prometheus
import ServiceLifecycle
import Synchronization
import Tracing

/// A member of the worker consumer group: polls the raw topic in batches, verifies each partition's messages,
/// writes each partition batch to PostgreSQL in one transaction (shared with the other partitions' batches ready at the
/// same time: ``GroupCommitWriter``), commits the partitions' offsets only after that transaction committed (one commit
/// for the batches that ended together, ``StateMachine/Action/commit(_:)``), then publishes the batch's outbox rows to
/// the output topics.
///
/// The outbox makes publishing crash-safe: rows are written in the batch's transaction and deleted only once the
/// broker acknowledged their events. Publishing runs beside polling (``OutboxDrain``), so the output brokers' health
/// never holds up storing, committing or group membership; the drain publishes a partition's leftover rows when the
/// member is assigned it, after a batch fails (its COMMIT may have gone through), whenever a periodic sweep finds
/// some, and, while publishing fails, every retry interval.
///
/// A partition newly assigned is claimed in PostgreSQL before its first batch and before the drain first reads its
/// outbox: the claim waits for a previous owner's transactions still running, and a batch of a partition claimed by
/// another member since stores nothing (Docs/adr/0016-partition-ownership-fence.md).
///
/// A database restored to an earlier point than the group's committed offsets is never skipped over: a claim that
/// finds the database holding a partition through less than the member would resume from, or a batch whose fence
/// finds it so (a restore while running), rewinds the partition to what the database holds, and the group's
/// committed offset follows; what the raw topic no longer holds is reported as lost, like any retention gap.
///
/// A batch that fails (database unavailable, a verification to retry, anything else) is never skipped: its partition
/// is paused, the same messages are tried again after a growing, jittered pause, and no offset moves past them.
/// Other partitions go on. On a revocation the member finishes (or, for lost partitions, abandons) their pending
/// work before it polls again, so the partitions move with everything committed. What to do when is decided by
/// ``StateMachine``, which the poll loop feeds with events and whose actions it performs. Run it as a `Service`; on
/// graceful shutdown it finishes the batch in hand and leaves the group.
package final class Worker: Service, Sendable {
    package let configuration: WorkerConfiguration
    private let store: NotificationStore
    private let verifier: RawBatchVerifier
    private let publisher: OutboxPublisher
    private let logger: Logger
    /// Starts a span per partition batch, with spans for its verification and its write; nil when tracing is off.
    let tracer: (any Tracer)?
    /// What the worker measures; serve ``WorkerMetrics/registry`` (with a ``WorkerMetricsSampler`` for its gauges).
    package let metrics: WorkerMetrics
    private let status = Mutex(Status())
    /// Claims ended since the run loop last looked, with their outcome (nil: failed).
    private let endedClaims = Mutex<
        [(requests: [StateMachine.ClaimRequest], claims: [KafkaTopicPartition: PartitionClaim]?)]
    >([])
    /// Commits ended since the run loop last looked (at most one: one runs at a time), and whether they held.
    private let endedCommits = Mutex<[(offsets: [KafkaTopicPartitionOffset], committed: Bool)]>([])
    /// Checks of `partition_owners` ended since the run loop last looked, with the rows read (nil: failed).
    private let endedStoredChecks = Mutex<
        [(checks: [StateMachine.StoredCheck], owners: [KafkaTopicPartition: PartitionClaim]?)]
    >([])
    /// Who this member is in `partition_owners` (with the assignment claimed, ``claim(_:)``): the host, the process,
    /// and a random part, since one process may run several members.
    private let member =
        "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)/\(UUID().uuidString.prefix(8))"

    /// The longest a poll waits while batches are in flight: a batch that ended is noticed (its partition's next
    /// batch started, its rows handed to the drain) within this, or as soon as messages arrive. 50 ms rather than
    /// 10: 3–3.6% less worker CPU per notification at the highest sustained load, on two machines (partition batches
    /// start less often and hold more); a batch already waits up to ``WorkerConfiguration/transactionInterval``
    /// (200 ms) for its transaction (Docs/benchmarks.md, 2026-11-28).
    static let pollWaitWhileBatchesRun: Duration = .milliseconds(50)

    /// The run loop's state, for probes and scrapes.
    private struct Status {
        var running = false
        var lastTurn: ContinuousClock.Instant?
    }

    /// - Parameters:
    ///   - producer: produces the output topics; run it in the same `ServiceGroup`, before the worker, so it flushes
    ///     after the worker stopped.
    ///   - tracer: records the batches' spans, continuing the traces their messages carry; nil for no tracing.
    package init(
        configuration: WorkerConfiguration,
        verifiers: VerifierDirectory,
        store: NotificationStore,
        producer: KafkaProducer,
        metrics: WorkerMetrics = WorkerMetrics(),
        tracer: (any Tracer)? = nil,
        logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.verifier = RawBatchVerifier(directory: verifiers, parallelism: configuration.verificationParallelism)
        self.publisher = OutboxPublisher(
            store: store,
            producer: producer,
            topics: configuration.outputTopics,
            metrics: metrics,
            appNames: verifiers.appNames,
            tracer: tracer,
            logger: logger
        )
        self.metrics = metrics
        self.tracer = tracer
        self.logger = logger
        for unavailable in verifiers.unavailable {
            logger.warning("\(unavailable.reason); such notifications are stored as rejected (\(unavailable.status))")
        }
    }

    /// Consumes until graceful shutdown or cancellation, then leaves the group.
    package func run() async throws {
        // Messages wait in per-partition queues, partitions moving at different speeds: a buffer per message, so
        // that a few messages of many polls do not keep every one of those polls' bytes in memory.
        var consumerConfiguration = configuration.consumer
        consumerConfiguration.buffersPerMessage = true
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        status.withLock { $0.running = true }
        defer { status.withLock { $0 = Status() } }
        let drain = OutboxDrain(configuration: configuration, publisher: publisher, store: store, logger: logger)
        let writer = GroupCommitWriter(
            store: store,
            lanes: configuration.maximumConcurrentWrites,
            maximumMessages: configuration.maximumBatchSize,
            interval: configuration.transactionInterval,
            metrics: metrics,
            logger: logger
        )
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await drain.run() }
            group.addTask { await writer.run() }
            try await consume(consumer, drain, writer)
            group.cancelAll()
        }
    }

    /// The poll loop: batches in, stored, committed, their outbox rows handed to `drain`. What to do when is the
    /// ``StateMachine``'s; this loop polls, performs its actions and tells it how they ended.
    private func consume(_ consumer: KafkaConsumer, _ drain: OutboxDrain, _ writer: GroupCommitWriter) async throws {
        var machine = StateMachine(configuration: configuration, now: .now)
        var tasks = PartitionTasks()
        var claimTask: Task<Void, Never>?
        var storedCheckTask: Task<Void, Never>?
        var commitTask: Task<Void, Never>?
        /// Once the loop ends, however it ends: a claim, a check or a commit still running is of no use.
        func endClaimAndCheck() async {
            for task in [claimTask, storedCheckTask, commitTask] {
                task?.cancel()
                await task?.value
            }
        }
        /// Performs `actions`, and those that their results lead to.
        func perform(_ actions: [StateMachine.Action]) async throws(KafkaError) {
            var pending = actions[...]
            // Batches that ended together hand their rows to the drain at once: they go out in one publication.
            var written: [(rows: [OutboxMessage]?, partition: KafkaTopicPartition)] = []
            func handWritten() {
                guard !written.isEmpty else { return }
                drain.written(written)
                written = []
            }
            defer { handWritten() }
            while let action = pending.popFirst() {
                switch action {
                case .claim(let requests):
                    // The state machine starts one claim at a time, after the previous one ended.
                    claimTask = Task { await self.claim(requests) }
                case .startBatch(var batch):
                    batch.span = startSpan(of: batch)
                    tasks.start(batch) { batch in await self.verify(batch) }
                case .writeBatch(let batch, let notifications):
                    // The verification's task ended and was taken: the partition's place is free for its write.
                    tasks.start(batch) { batch in await self.write(batch, notifications, writer) }
                case .commit(let offsets):
                    // The state machine starts one commit at a time, after the previous one ended.
                    commitTask = Task { await self.commit(offsets, consumer) }
                case .pause(let partitions):
                    try await consumer.pause(partitions)
                case .resume(let partitions):
                    try await consumer.resume(partitions)
                case .assignOutputs(let partitions):
                    drain.assign(partitions)
                case .publishWritten(let rows, let partition):
                    written.append((rows, partition))
                case .publishFromTable(let partitions):
                    drain.mayHaveRows(partitions)
                case .handOver(let partitions), .withdrawOutputs(let partitions):
                    // The next owner publishes what is left; its publications must not overlap ours.
                    handWritten()
                    await drain.revoke(partitions)
                case .checkStored(let checks):
                    // The state machine starts one check at a time, after the previous one ended.
                    storedCheckTask = Task { await self.checkStored(checks) }
                case .rewind(let offset, let from):
                    // A failed seek throws (the consumer tries a timed-out one again first): going on from the later
                    // offset would skip what the database lacks.
                    try await consumer.seek([offset])
                    reportRewound(offset, from: from)
                }
            }
        }
        /// Reports the commits that ended to the state machine.
        func commitsEnded() -> [StateMachine.Action] {
            endedCommits.takeAll().flatMap { machine.commitEnded($0.offsets, committed: $0.committed, now: .now) }
        }
        /// Waits for the batches and the commit the partitions being given up wait for, and performs what follows,
        /// until they are given up.
        func settleEndings() async throws(KafkaError) {
            while true {
                if let partition = machine.endingInFlight.first {
                    guard let outcome = await tasks.wait(for: partition) else {
                        preconditionFailure("the state machine has a batch of \(partition) in flight without a task")
                    }
                    endSpans(of: [outcome])
                    try await perform(machine.batchEnded(outcome, now: .now))
                } else if machine.endingWaitsForCommit {
                    await commitTask?.value
                    // The commit that ended may start the next (offsets stored meanwhile, or a refusal retried):
                    // then the machine is committing again, and performing its actions starts that commit's task.
                    let ended = commitsEnded()
                    let startsCommit = ended.contains { if case .commit = $0 { true } else { false } }
                    guard !machine.isCommitting || startsCommit else {
                        preconditionFailure("the state machine has a commit running without a task")
                    }
                    try await perform(ended)
                } else {
                    return
                }
            }
        }
        do {
            while !Task.isCancelled, !Task.isShuttingDownGracefully {
                status.withLock { $0.lastTurn = .now }
                let claims = endedClaims.takeAll()
                var ended: [StateMachine.Action] = []
                for (requests, claimed) in claims {
                    ended += machine.claimEnded(requests, claims: claimed, now: .now)
                }
                let checks = endedStoredChecks.takeAll()
                for (checked, owners) in checks {
                    ended += machine.storedChecked(checked, owners: owners, now: .now)
                }
                // The batches that ended together commit together: before the commit that ended, so that the next
                // commit, which starts when one ended, takes their offsets too.
                let finished = await tasks.takeFinished()
                endSpans(of: finished)
                ended += machine.batchesEnded(finished, now: .now)
                ended += commitsEnded()
                try await perform(ended)
                // While batches or a claim are in flight, poll briefly so a partition whose batch or claim ended
                // starts its next batch soon.
                let events = try await consumer.poll(
                    maxMessages: configuration.maximumBatchSize,
                    maxWait: machine.hasBatchInFlight || machine.isClaiming
                        ? min(configuration.maximumWait, Self.pollWaitWhileBatchesRun) : configuration.maximumWait
                )
                for event in events {
                    switch event {
                    case .messages(let messages):
                        machine.received(messages, now: .now)
                    case .partitionsAssigned(let assigned):
                        logger.info("Partitions assigned", metadata: ["kafka.partitions": "\(assigned.sorted())"])
                        // Read before the next poll, while they are the group's committed offsets.
                        let committed = consumer.positions(of: assigned)
                        try await perform(machine.assigned(assigned, committed: committed, now: .now))
                    case .partitionsRevoked(let revocation):
                        // Settled before the next poll hands them over: revoked partitions leave with everything
                        // in hand stored and committed; lost ones already belong to another member, and their work
                        // is abandoned uncommitted once their batches in flight ended.
                        try await perform(
                            machine.revoke(revocation.partitions, isLost: revocation.isLost, now: .now)
                        )
                        try await settleEndings()
                    case .offsetGap(let gap):
                        reportLost(gap)
                    }
                }
                try await perform(machine.tick(now: .now))
                metrics.pausedPartitions.set(Double(consumer.pausedPartitions.count))
            }
            // Graceful shutdown: the batches in flight end, one last try at what is in hand; the rest is redelivered
            // to the next owner.
            try await perform(machine.shutDown(now: .now))
            try await settleEndings()
            await commitTask?.value
            await endClaimAndCheck()
            await drain.finish()
        } catch {
            await tasks.waitForAll()
            await endClaimAndCheck()
            await drain.revoke(consumer.assignment)
            try? await consumer.close()
            throw error
        }
        try await consumer.close()
    }

    private func reportLost(_ gap: KafkaOffsetGap) {
        metrics.countLost(gap)
        logger.error(
            """
            Raw-topic messages were deleted before this group consumed them (retention); they are lost to the \
            pipeline: run the reconciler (history sync) over the time they cover
            """,
            metadata: [
                "kafka.partition": "\(gap.topicPartition)",
                "kafka.offsets": "\(gap.offsets.lowerBound)..<\(gap.offsets.upperBound)",
                "messages.lost": "\(gap.count)",
                "kafka.logStartOffset": "\(gap.logStartOffset.map(String.init) ?? "unknown")",
            ]
        )
    }

    private func reportRewound(_ offset: KafkaTopicPartitionOffset, from: Int64) {
        metrics.countRewound(offset.topicPartition, offsets: from - offset.offset)
        logger.error(
            """
            The database holds this partition through an earlier offset than the group committed or this member \
            stored (restored to an earlier point, or emptied): consuming it again from there; notifications already \
            stored are duplicates, and any the raw topic no longer holds are reported as lost
            """,
            metadata: [
                "kafka.partition": "\(offset.topicPartition)",
                "kafka.resumeOffset": "\(from)",
                "database.storedThroughOffset": "\(offset.offset)",
                "messages.rewound": "\(from - offset.offset)",
            ]
        )
    }

    /// Claims `requests`' partitions in PostgreSQL (``NotificationStore/claim(_:)``) and reports the outcome to the
    /// run loop; the claim waits for a previous owner's transactions still running, for at most the store's operation
    /// timeout, while the loop goes on polling.
    private func claim(_ requests: [StateMachine.ClaimRequest]) async {
        let owners = Dictionary(uniqueKeysWithValues: requests.map { ($0.partition, "\(member)#\($0.assignment)") })
        var claims: [KafkaTopicPartition: PartitionClaim]?
        do {
            let claimed = try await store.claim(owners)
            claims = claimed
            let described = claimed.sorted { $0.key < $1.key }.map { partition, claim in
                let stored = claim.storedThroughOffset.map { "stored through \($0)" } ?? "stored through unknown"
                return "\(partition) epoch \(claim.epoch) \(stored)"
            }
            logger.info("Partitions claimed", metadata: ["kafka.partitions": "\(described)"])
        } catch {
            metrics.failedClaims.increment()
            logger.warning(
                "Partitions not claimed; trying again shortly, storing nothing of them meanwhile",
                metadata: ["kafka.partitions": "\(owners.keys.sorted())", "error": "\(error)"]
            )
        }
        endedClaims.withLock { $0.append((requests, claims)) }
    }

    /// Commits `offsets` (``StateMachine/Action/commit(_:)``) and reports how it ended to the run loop; a refused
    /// commit is the state machine's to try again.
    private func commit(_ offsets: [KafkaTopicPartitionOffset], _ consumer: KafkaConsumer) async {
        var committed = true
        do {
            try await consumer.commit(offsets)
        } catch {
            // Stored but not committed: should a partition move first, its next owner gets the batches again and
            // finds duplicates. Never a reason to store them twice.
            committed = false
            logger.notice(
                "Offsets not committed; committing them again shortly",
                metadata: ["error": "\(error)", "kafka.offsets": "\(offsets)"]
            )
        }
        metrics.countCommit(committed: committed)
        endedCommits.withLock { $0.append((offsets, committed)) }
    }

    /// Reads the owned partitions' rows of `partition_owners` for the state machine's check of a database restored
    /// behind the member (``StateMachine/storedChecked(_:owners:now:)``); a failed read is logged and the next check
    /// tries again.
    private func checkStored(_ checks: [StateMachine.StoredCheck]) async {
        var owners: [KafkaTopicPartition: PartitionClaim]?
        do {
            // What is found is the state machine's to judge; a partition found behind is claimed again, and the
            // claim's rewind is logged.
            owners = try await store.partitionOwners(checks.map(\.partition))
        } catch {
            logger.debug("Partition owners not read; checking again later", metadata: ["error": "\(error)"])
        }
        endedStoredChecks.withLock { $0.append((checks, owners)) }
    }

    /// Verifies one partition's batch: verified, its notifications to be written next
    /// (``StateMachine/Action/writeBatch(_:_:)``), or to be tried again.
    private func verify(_ batch: PartitionBatch) async -> BatchOutcome {
        let span = startSpan("verify", in: batch)
        defer { span?.end() }
        return await within(span) { await verifyInSpan(batch, span) }
    }

    private func verifyInSpan(_ batch: PartitionBatch, _ span: (any Span)?) async -> BatchOutcome {
        do {
            let verificationStart = ContinuousClock.now
            var notifications = try await verifier.batch(for: batch.messages)
            notifications.fences = [batch.fence]
            metrics.verificationDuration.record(verificationStart.duration(to: .now))
            span?.attributes["asnp.notifications.rejected"] = notifications.entries.count { entry in
                if case .rejected = entry.verdict { true } else { false }
            }
            return BatchOutcome(batch: batch, verified: notifications)
        } catch {
            span?.recordError(error)
            span?.setStatus(SpanStatus(code: .error))
            return failed(batch, stage: "verify", error)
        }
    }

    /// Stores one partition's verified batch: stored (with the write's outbox messages; its offset is the state
    /// machine's to commit), to be tried again, or refused because another member claimed the partition since. The
    /// transaction is shared with the batches of other partitions ready at the same time (``GroupCommitWriter``).
    private func write(
        _ batch: PartitionBatch,
        _ notifications: NotificationBatch,
        _ writer: GroupCommitWriter
    ) async -> BatchOutcome {
        let span = startSpan("store", in: batch)
        defer { span?.end() }
        return await within(span) { await writeInSpan(batch, notifications, writer, span) }
    }

    private func writeInSpan(
        _ batch: PartitionBatch,
        _ notifications: NotificationBatch,
        _ writer: GroupCommitWriter,
        _ span: (any Span)?
    ) async -> BatchOutcome {
        var logger = logger
        logger[metadataKey: "kafka.partition"] = "\(batch.partition)"
        do {
            // A batch tried again is written alone, on a connection of its own: it keeps its place.
            let written = try await writer.write(
                notifications,
                of: batch.partition,
                alone: batch.attempts > 0,
                isBehind: batch.isBehind
            )
            metrics.batchSize.record(Double(batch.messages.count))
            if logger.logLevel <= .debug { logEntries(notifications, logger: logger) }
            return BatchOutcome(batch: batch, stored: BatchOutcome.Stored(outboxMessages: written.outboxMessages))
        } catch  where error.code == .partitionNotOwned && error.partitions.contains(batch.partition) {
            // Not a failure to retry: the partition is someone else's now (its revocation is on its way).
            metrics.fencedBatches.increment()
            logger.notice(
                "Batch refused: another member claimed the partition since; letting it go",
                metadata: ["error": "\(error)"]
            )
            return BatchOutcome(batch: batch, notOwned: true)
        } catch  where error.code == .storedOffsetBehind && error.partitions.contains(batch.partition) {
            // Not a failure to retry as it is: storing it would skip what the database no longer holds.
            logger.warning(
                "Batch refused: the database holds the partition through less than was stored; claiming it again",
                metadata: ["error": "\(error)"]
            )
            return BatchOutcome(batch: batch, storedBehind: true)
        } catch {
            span?.recordError(error)
            span?.setStatus(SpanStatus(code: .error))
            return failed(batch, stage: "store", error)
        }
    }

    /// A batch that failed at `stage`, counted and logged: its partition waits out a backoff, then tries it again.
    private func failed(_ batch: PartitionBatch, stage: String, _ error: any Error) -> BatchOutcome {
        metrics.countFailedBatch(stage: stage, code: Self.code(of: error))
        logger.warning(
            "Batch not stored; pausing the partition and trying the same batch again",
            metadata: [
                "kafka.partition": "\(batch.partition)", "error": "\(error)", "batch.attempt": "\(batch.attempts + 1)",
            ]
        )
        return BatchOutcome(batch: batch)
    }

    /// One debug line per consumed message: what an operator searches by (its offset, the ingress's request id, the
    /// notification's UUID and subscription, or why it was rejected).
    private func logEntries(_ batch: NotificationBatch, logger: Logger) {
        for entry in batch.entries {
            var metadata: Logger.Metadata = ["kafka.offset": "\(entry.raw.source.offset)"]
            if let requestID = entry.raw.headers[RawNotificationHeaders.Name.requestID] {
                metadata["request.id"] = "\(requestID)"
            }
            switch entry.verdict {
            case .verified(let notification):
                let facts = NotificationFacts(notification)
                if let uuid = facts.notificationUUID { metadata["notification.uuid"] = "\(uuid.lowercased())" }
                if let id = facts.originalTransactionId { metadata["original_transaction_id"] = "\(id)" }
                metadata["notification.type"] = "\(facts.notificationType ?? "-")"
                logger.debug("Notification verified", metadata: metadata)
            case .rejected(let status, let reason):
                metadata["rejection.status"] = "\(status)"
                metadata["rejection.reason"] = "\(reason)"
                logger.debug("Notification rejected", metadata: metadata)
            }
        }
    }

    /// The error's code for the failure metric: the store's and Kafka's codes, else the type's name.
    private static func code(of error: any Error) -> String {
        switch error {
        case let error as NotificationStoreError: error.code.rawValue
        case let error as KafkaError: error.code.rawValue
        case let error as RawBatchVerifier.RetryLater: error.error.code.rawValue
        default: String(describing: type(of: error))
        }
    }

    // MARK: - Probes and scrapes

    /// Why the worker should be restarted, or nil: its loop has not turned for longer than the consumer's
    /// `maxPollInterval` (the group has thrown it out by then).
    package func liveness() -> String? {
        let limit = configuration.consumer.maxPollInterval
        return status.withLock { status in
            guard let lastTurn = status.lastTurn, lastTurn.duration(to: .now) > limit else { return nil }
            return "the consumer loop has not turned for more than \(limit)"
        }
    }

    /// Why the worker is not ready, or nil: it is ready once it consumes (after the schema check) and until it stops.
    package func readiness() -> String? {
        status.withLock { $0.running ? nil : "not consuming (starting, or stopped)" }
    }
}
