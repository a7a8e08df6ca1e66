import KafkaClient
import NotificationStore

extension Worker {
    /// The life of each partition this member owns, on the batch side: messages queued, a batch in flight, stored,
    /// its offset committed or to be committed again, its outbox rows handed to the drain; revoked or lost at any of
    /// those, or finished at shutdown. Pure — no Kafka, database or clock of its own (every call is told `now`) — so
    /// every transition and interleaving can be tested; ``Worker`` performs the ``Action``s it returns and reports
    /// back how they ended.
    ///
    /// Each partition stays in order because it never has two batches in flight, a failed batch goes back in front
    /// of what arrived after it, and an offset is committed only for a batch that was stored.
    ///
    /// Offsets are committed here and nowhere else (``Action/commit(_:)``): one commit at a time, in a task of the
    /// worker's, of every partition's offset stored and not yet committed, the highest of each — so the batches that
    /// ended together, whatever transactions stored them, share one commit, and a commit refused, a partition given
    /// up and a rewind go the same way. Across members, a
    /// partition is claimed in PostgreSQL before its first batch and before the drain first reads its outbox
    /// (``Action/claim(_:)``): the claim waits for a previous owner's transactions still running, and refuses its
    /// later ones, so the drain's first read finds every row a previous owner will ever store
    /// (Docs/adr/0016-partition-ownership-fence.md). Partitions never wait
    /// for one another beyond ``WorkerConfiguration/maximumConcurrentBatches``, which counts the batches being
    /// verified: a batch runs in two tasks, its verification (``Action/startBatch(_:)``) then its write
    /// (``Action/writeBatch(_:_:)``), and one verified and waiting for its shared transaction makes room for another
    /// partition's, so that every partition's batch can join the next transaction.
    ///
    /// Nothing is skipped when the database was restored to an earlier point than the group's committed offsets: each
    /// partition knows the offset the database must hold it through (the committed offset it resumed from, then each
    /// batch's next offset); a claim that finds the database behind it rewinds the partition there
    /// (``Action/rewind(_:from:)``), and a batch the database turns out to be behind for
    /// (``BatchOutcome/storedBehind``, a restore while running) has its partition claimed again, which finds it so.
    struct StateMachine {
        /// A partition to claim, and which of its assignments to this member the claim is for: a claim made again for
        /// the same assignment (after a failure whose answer may have been lost) names the same owner.
        struct ClaimRequest: Hashable, Sendable {
            var partition: KafkaTopicPartition
            var assignment: Int
        }

        /// A held partition to check in `partition_owners` (``Action/checkStored(_:)``): its claim's epoch and the
        /// offset the database must hold it through, as the check started.
        struct StoredCheck: Hashable, Sendable {
            var partition: KafkaTopicPartition
            var epoch: Int64
            var storedThrough: Int64
        }

        /// What the worker is to do.
        enum Action {
            /// Claim these partitions in PostgreSQL (``NotificationStore/claim(_:)``), in a task of its own; report
            /// to ``claimEnded(_:epochs:now:)``. No batch of theirs starts and the drain does not read them before.
            case claim([ClaimRequest])
            /// Verify the batch in a task of its own; report its end to ``batchesEnded(_:now:)``.
            case startBatch(PartitionBatch)
            /// Write the batch, verified into these notifications, in a task of its own in the place of its
            /// verification's (the partition's batch is still in flight); report its end to ``batchesEnded(_:now:)``.
            case writeBatch(PartitionBatch, NotificationBatch)
            /// Commit these offsets (of stored batches, or a partition's rewind), one per partition, in a task of its
            /// own; report its end to ``commitEnded(_:committed:now:)``. No other commit starts before.
            case commit([KafkaTopicPartitionOffset])
            /// Stop fetching these partitions: they are backing off, or hold their share of messages in memory.
            case pause([KafkaTopicPartition])
            /// Fetch these partitions again.
            case resume([KafkaTopicPartition])
            /// Newly owned partitions: the outbox drain takes them over (a previous owner may have left rows).
            case assignOutputs([KafkaTopicPartition])
            /// A stored batch's outbox rows for the drain to publish (nil: the write did not return them, read the
            /// table).
            case publishWritten([OutboxMessage]?, KafkaTopicPartition)
            /// Rows of these partitions may be in the outbox table: a failed batch's COMMIT may have gone through.
            case publishFromTable([KafkaTopicPartition])
            /// These partitions are given up, their batches ended and offsets committed (or lost): the drain lets
            /// them go once their running publications end, and the next poll hands them over.
            case handOver([KafkaTopicPartition])
            /// Another member claimed these partitions since their claim here (a batch was refused), or the database
            /// was found behind them: the drain lets them go as at a hand-over. They store nothing more until they
            /// are claimed again: at once when the database is behind; otherwise after a backoff, should their
            /// revocation not come first (this member still owns them in the group's eyes).
            case withdrawOutputs([KafkaTopicPartition])
            /// The database holds the partition only through this offset, less than `from`, the offset the member
            /// would resume from: make the consumer hand out the partition's messages from it again (messages already
            /// stored are duplicates). What was queued is dropped, and the offset is committed (the group follows the
            /// database back).
            case rewind(KafkaTopicPartitionOffset, from: Int64)
            /// Read these partitions' rows of `partition_owners` (``NotificationStore/partitionOwners(_:)``), in a
            /// task of its own, and report to ``storedChecked(_:owners:now:)``: one restored behind a partition that
            /// receives nothing is found without waiting for its next batch's fence.
            case checkStored([StoredCheck])
        }

        /// A partition's claim in PostgreSQL.
        private enum Claim: Equatable {
            /// To make, at once or not before a time (after a failed claim, or the partition claimed by another).
            case wanted(notBefore: ContinuousClock.Instant?)
            case claiming
            /// Made: its batches carry this epoch.
            case held(epoch: Int64)
        }

        /// How a partition's ownership ends.
        private struct Ending {
            /// Lost: another member owns it already, so nothing more is stored or committed.
            var isLost: Bool
            /// Revoked (its outputs are handed over) rather than finished at shutdown (the drain publishes last).
            var handsOver: Bool
            var lastBatchStarted = false
            /// Its one last commit, after its last batch, started: it is let go once that commit ended, held or not.
            var commitTried = false
        }

        private struct Partition {
            /// Which assignment of the partition to this member this is (names its claim).
            var assignment: Int
            var claim = Claim.wanted(notBefore: nil)
            /// Claims that failed or were overtaken by another member's since a batch was last stored.
            var claimAttempts = 0
            /// The offset the database must hold the partition through before the next batch: the group's committed
            /// offset when it was assigned (or the offset rewound to), then the next offset of each batch stored. Nil
            /// while unknown (nothing committed, the database's word unknown): nothing is checked.
            var storedThrough: Int64?
            /// Messages not yet in a batch, in offset order.
            var queued: [KafkaMessage] = []
            /// When the oldest queued message arrived (the longest-waiting partition goes first).
            var queuedSince: ContinuousClock.Instant
            /// Failed attempts at the queue's first messages.
            var attempts = 0
            /// After a failed batch: not before then.
            var retryAt: ContinuousClock.Instant?
            /// A batch is in flight, from the start of its verification to the end of its write.
            var inFlight = false
            /// The batch in flight is verified and being written (``Action/writeBatch(_:_:)``).
            var writing = false
            /// The batch in flight is an attempt after a failure: written alone, on a connection of its own, it keeps
            /// its place among the batches being verified until it ended.
            var retrying = false

            /// Counts against ``maximumConcurrentBatches``.
            var isVerifying: Bool { inFlight && (!writing || retrying) }
            /// The offset to commit: the next offset of the last batch stored, or the offset rewound to, until a commit
            /// of it held.
            var uncommitted: Int64?
            /// Paused on the consumer.
            var paused = false
            /// Set once the partition is being revoked, lost, or finished at shutdown.
            var ending: Ending?

            var isConsuming: Bool { ending == nil }
            /// The epoch of its claim, once made.
            var epoch: Int64? { if case .held(let epoch) = claim { epoch } else { nil } }
            /// A claim waits out a pause: nothing can be stored meanwhile, so the partition is paused.
            var claimWaits: Bool { if case .wanted(let notBefore) = claim { notBefore != nil } else { false } }
        }

        /// Refused commits are tried again after this long.
        static let commitRetryInterval: Duration = .milliseconds(500)
        /// The commit running (``Action/commit(_:)``), by partition; nil when none runs.
        private var committing: [KafkaTopicPartition: Int64]?
        /// Whether a ``Action/commit(_:)`` runs (one at a time).
        var isCommitting: Bool { committing != nil }

        private let storedCheckInterval: Duration
        private var nextStoredCheck: ContinuousClock.Instant
        /// Whether a ``Action/checkStored(_:)`` runs (one at a time).
        private(set) var isCheckingStored = false
        private let maximumBatchSize: Int
        private let maximumConcurrentBatches: Int
        private let initialBackoff: Duration
        private let maximumBackoff: Duration
        /// A factor in `0.75...1.25` for each backoff, so members do not retry in step.
        private let jitter: @Sendable (ClosedRange<Double>) -> Double
        private var partitions: [KafkaTopicPartition: Partition] = [:]
        private var nextCommitAttempt: ContinuousClock.Instant
        private var assignments = 0
        /// Whether a ``Action/claim(_:)`` runs (one at a time; partitions assigned meanwhile wait for the next).
        private(set) var isClaiming = false

        init(
            configuration: WorkerConfiguration,
            now: ContinuousClock.Instant,
            jitter: @escaping @Sendable (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
        ) {
            self.storedCheckInterval = configuration.storedOffsetCheckInterval
            self.nextStoredCheck = now.advanced(by: configuration.storedOffsetCheckInterval)
            self.maximumBatchSize = max(1, configuration.maximumBatchSize)
            self.maximumConcurrentBatches = max(1, configuration.maximumConcurrentBatches)
            self.initialBackoff = configuration.initialBackoff
            self.maximumBackoff = configuration.maximumBackoff
            self.jitter = jitter
            self.nextCommitAttempt = now
        }

        // MARK: - Reading

        /// The partitions owned (being given up included).
        var owned: Set<KafkaTopicPartition> { Set(partitions.keys) }

        /// Partitions with a batch in flight.
        var inFlight: Set<KafkaTopicPartition> { Set(partitions.filter(\.value.inFlight).keys) }

        /// Partitions whose batch in flight counts against ``WorkerConfiguration/maximumConcurrentBatches``: not yet
        /// verified, or an attempt after a failure.
        var verifying: Set<KafkaTopicPartition> {
            Set(partitions.filter(\.value.isVerifying).keys)
        }

        /// Whether any batch is in flight.
        var hasBatchInFlight: Bool { partitions.values.contains(where: \.inFlight) }

        /// Partitions being given up (or finished) whose batch in flight must end before they can be: wait for these
        /// and report them to ``batchesEnded(_:now:)`` (a verification that ended starts its write: wait for it too).
        var endingInFlight: [KafkaTopicPartition] {
            partitions.filter { $0.value.ending != nil && $0.value.inFlight }.keys.sorted()
        }

        /// Whether a partition being given up (or finished) waits for the commit running: wait for it and report it
        /// to ``commitEnded(_:committed:now:)``.
        var endingWaitsForCommit: Bool {
            isCommitting && partitions.values.contains { $0.ending != nil }
        }

        /// Partitions paused on the consumer.
        var paused: Set<KafkaTopicPartition> { Set(partitions.filter(\.value.paused).keys) }

        /// Offsets of stored batches still to commit.
        var uncommitted: [KafkaTopicPartition: Int64] { partitions.compactMapValues(\.uncommitted) }

        // MARK: - Events

        /// Partitions now owned, with the group's committed offsets where known: they are claimed first; their
        /// messages queue meanwhile.
        mutating func assigned(
            _ assigned: some Sequence<KafkaTopicPartition>,
            committed: [KafkaTopicPartition: Int64] = [:],
            now: ContinuousClock.Instant
        ) -> [Action] {
            for partition in assigned where partitions[partition] == nil {
                assignments += 1
                var state = Partition(assignment: assignments, queuedSince: now)
                state.storedThrough = committed[partition]
                partitions[partition] = state
            }
            return startClaim(now: now)
        }

        /// A ``Action/claim(_:)`` ended: with each partition's claim, or nil when it failed (tried again after a
        /// backoff, the partition paused meanwhile). Claimed partitions go to the drain, and their batches may start;
        /// one the database holds through less than the member would resume from is rewound first.
        mutating func claimEnded(
            _ requests: [ClaimRequest],
            claims: [KafkaTopicPartition: PartitionClaim]?,
            now: ContinuousClock.Instant
        ) -> [Action] {
            isClaiming = false
            var held: [KafkaTopicPartition] = []
            var rewinds: [Action] = []
            for request in requests {
                // A partition revoked meanwhile, or owned again since (a claim of its own to come), is not this claim's.
                guard var state = partitions[request.partition], state.assignment == request.assignment,
                    state.claim == .claiming
                else { continue }
                if let claim = claims?[request.partition] {
                    state.claim = .held(epoch: claim.epoch)
                    held.append(request.partition)
                    if let stored = claim.storedThroughOffset, let expected = state.storedThrough, stored < expected {
                        // Restored to an earlier point: never skip what the database no longer holds.
                        state.queued = []
                        state.queuedSince = now
                        state.attempts = 0
                        state.retryAt = nil
                        state.storedThrough = stored
                        state.uncommitted = stored
                        let offset = KafkaTopicPartitionOffset(request.partition, offset: stored)
                        rewinds.append(.rewind(offset, from: expected))
                    } else if claim.storedThroughOffset == nil {
                        // Unknown (stored before the table recorded it): the group's offset is the best word, and
                        // the first batch records the database's.
                        state.storedThrough = nil
                    }
                } else {
                    state.claimAttempts += 1
                    state.claim = .wanted(notBefore: now.advanced(by: backoff(attempts: state.claimAttempts)))
                }
                partitions[request.partition] = state
            }
            let actions: [Action] = held.isEmpty ? [] : [.assignOutputs(held.sorted())]
            return rewinds + actions + startClaim(now: now)
        }

        /// Messages polled. Those of a partition not owned, or being given up, are ignored: the consumer hands out
        /// only messages of partitions it announced, and a revocation is settled before the next poll.
        mutating func received(_ messages: [KafkaMessage], now: ContinuousClock.Instant) {
            for message in messages {
                let partition = message.topicPartition
                // Changed in place: a copy of the partition's state would copy its queue for every message.
                guard partitions[partition]?.isConsuming == true else { continue }
                if partitions[partition]!.queued.isEmpty { partitions[partition]!.queuedSince = now }
                // Each in a buffer of its own (the worker's consumer takes no slices of a poll's buffer).
                partitions[partition]!.queued.append(message)
            }
        }

        /// What to do now: claim what is due, start the batches that may start, commit what is due (a refused
        /// commit again, a rewind), pause and resume.
        mutating func tick(now: ContinuousClock.Instant) -> [Action] {
            startClaim(now: now) + startBatches(now: now).map(Action.startBatch) + startStoredCheck(now: now)
                + startCommit(now: now) + applyPauses()
        }

        /// Batches' tasks ended: verified (their writes start, ``Action/writeBatch(_:_:)``), stored or not; those
        /// stored have their offsets committed together, in one ``Action/commit(_:)`` (unless one runs: then in the
        /// next, once it ended).
        mutating func batchesEnded(_ outcomes: [BatchOutcome], now: ContinuousClock.Instant) -> [Action] {
            var actions: [Action] = []
            for outcome in outcomes { actions += end(outcome, now: now) }
            return actions + advanceEndings(now: now) + startCommit(now: now)
        }

        /// A batch ended: ``batchesEnded(_:now:)`` of it alone.
        mutating func batchEnded(_ outcome: BatchOutcome, now: ContinuousClock.Instant) -> [Action] {
            batchesEnded([outcome], now: now)
        }

        /// One batch task's end, for ``batchesEnded(_:now:)``.
        private mutating func end(_ outcome: BatchOutcome, now: ContinuousClock.Instant) -> [Action] {
            let partition = outcome.batch.partition
            if let notifications = outcome.verified {
                // Its write follows in its task's place; unless it is an attempt after a failure, another partition's
                // batch may now be verified in its place (``Partition/isVerifying``).
                guard partitions[partition]?.inFlight == true, partitions[partition]?.writing == false else {
                    return []
                }
                partitions[partition]?.writing = true
                return [.writeBatch(outcome.batch, notifications)]
            }
            guard partitions[partition]?.inFlight == true, var state = partitions.removeValue(forKey: partition) else {
                return []
            }
            state.inFlight = false
            state.writing = false
            state.retrying = false
            // A lost or revoked partition's rows wait in the table for its next owner, which reads it on assignment.
            let publishes = state.ending?.handsOver != true
            var actions: [Action] = []
            if outcome.notOwned || outcome.storedBehind {
                // Its messages wait in front of what arrived since.
                if state.queued.isEmpty { state.queuedSince = now }
                state.queued = outcome.batch.messages + state.queued
                actions.append(claimAgain(partition, &state, claimedByAnother: outcome.notOwned, now: now))
            } else if let stored = outcome.stored {
                state.claimAttempts = 0
                let offset = outcome.batch.nextOffset.offset
                state.storedThrough = offset
                // Stored, so committed next (a rewind since set a lower offset, which a batch stored after it passes).
                state.uncommitted = max(state.uncommitted ?? offset, offset)
                if publishes { actions.append(.publishWritten(stored.outboxMessages, partition)) }
            } else {
                // Tried again after a backoff, in front of whatever arrived since.
                if state.queued.isEmpty { state.queuedSince = now }
                state.queued = outcome.batch.messages + state.queued
                state.attempts = outcome.batch.attempts + 1
                state.retryAt = now.advanced(by: backoff(attempts: state.attempts))
                if publishes { actions.append(.publishFromTable([partition])) }
            }
            partitions[partition] = state
            return actions
        }

        /// A ``Action/checkStored(_:)`` ended, with the rows read (nil: the read failed; the next check tries again).
        /// A partition whose row names another epoch is treated as claimed by another member; one the database
        /// holds through less than the check expected, as a batch refused for it: claimed again at once, which
        /// rewinds it. A partition with a batch in flight, or whose claim changed meanwhile, is left to its fence.
        mutating func storedChecked(
            _ checks: [StoredCheck],
            owners: [KafkaTopicPartition: PartitionClaim]?,
            now: ContinuousClock.Instant
        ) -> [Action] {
            isCheckingStored = false
            guard let owners else { return [] }
            var actions: [Action] = []
            for check in checks {
                guard var state = partitions[check.partition], state.isConsuming, !state.inFlight,
                    state.epoch == check.epoch
                else { continue }
                let row = owners[check.partition]
                if row?.epoch != check.epoch {
                    actions.append(claimAgain(check.partition, &state, claimedByAnother: true, now: now))
                } else if row?.storedThroughOffset.map({ $0 < check.storedThrough }) ?? true {
                    actions.append(claimAgain(check.partition, &state, claimedByAnother: false, now: now))
                } else {
                    continue
                }
                partitions[check.partition] = state
            }
            return actions
        }

        /// A ``Action/commit(_:)`` ended, the offsets held or refused (tried again after
        /// ``commitRetryInterval``). What was stored or rewound meanwhile goes in the next commit.
        mutating func commitEnded(
            _ offsets: [KafkaTopicPartitionOffset],
            committed: Bool,
            now: ContinuousClock.Instant
        ) -> [Action] {
            committing = nil
            if !committed { nextCommitAttempt = now.advanced(by: Self.commitRetryInterval) }
            for offset in offsets where committed {
                // Only the offset committed: one stored since is later, one rewound to since is earlier, and either is
                // still to commit.
                if partitions[offset.topicPartition]?.uncommitted == offset.offset {
                    partitions[offset.topicPartition]?.uncommitted = nil
                }
            }
            return advanceEndings(now: now) + startCommit(now: now)
        }

        /// Partitions revoked (given up in a rebalance) or lost (another member owns them already). Revoked ones
        /// have their batch in flight end, everything queued stored in one last batch and their offsets committed
        /// before they are handed over; lost ones only have their batch in flight end. Wait for
        /// ``endingInFlight`` until it is empty: every partition is then handed over.
        mutating func revoke(
            _ revoked: some Sequence<KafkaTopicPartition>,
            isLost: Bool,
            now: ContinuousClock.Instant
        ) -> [Action] {
            for partition in revoked where partitions[partition]?.isConsuming == true {
                partitions[partition]?.ending = Ending(isLost: isLost, handsOver: true)
            }
            return advanceEndings(now: now) + startCommit(now: now)
        }

        /// Graceful shutdown: every partition is finished as a revoked one is, but its outputs stay with the drain
        /// for a last publication. Done when ``owned`` is empty.
        mutating func shutDown(now: ContinuousClock.Instant) -> [Action] {
            for partition in partitions.keys where partitions[partition]?.isConsuming == true {
                partitions[partition]?.ending = Ending(isLost: false, handsOver: false)
            }
            return advanceEndings(now: now) + startCommit(now: now)
        }

        // MARK: - Transitions

        /// Another member claimed the partition since, or the database was found behind it: nothing more is stored
        /// until this member claims it again (a new assignment of it). Claimed by another: after a pause, unless it is
        /// revoked first, as it should be. The database behind: at once, and the claim says how far back it holds the
        /// partition. Meanwhile the drain lets its outputs go.
        private mutating func claimAgain(
            _ partition: KafkaTopicPartition,
            _ state: inout Partition,
            claimedByAnother: Bool,
            now: ContinuousClock.Instant
        ) -> Action {
            state.attempts = 0
            state.retryAt = nil
            assignments += 1
            state.assignment = assignments
            if claimedByAnother {
                state.claimAttempts += 1
                state.claim = .wanted(notBefore: now.advanced(by: backoff(attempts: state.claimAttempts)))
            } else {
                state.claim = .wanted(notBefore: nil)
            }
            return .withdrawOutputs([partition])
        }

        /// A claim of the consuming partitions whose claim is due, unless one runs.
        private mutating func startClaim(now: ContinuousClock.Instant) -> [Action] {
            guard !isClaiming else { return [] }
            let due = partitions.filter { partition, state in
                guard state.isConsuming, case .wanted(let notBefore) = state.claim else { return false }
                return notBefore.map { $0 <= now } ?? true
            }.keys.sorted()
            guard !due.isEmpty else { return [] }
            for partition in due { partitions[partition]?.claim = .claiming }
            isClaiming = true
            return [.claim(due.map { ClaimRequest(partition: $0, assignment: partitions[$0]!.assignment) })]
        }

        /// A check of the held, consuming partitions whose expected offset is known, every ``storedCheckInterval``,
        /// unless one runs.
        private mutating func startStoredCheck(now: ContinuousClock.Instant) -> [Action] {
            guard !isCheckingStored, now >= nextStoredCheck else { return [] }
            nextStoredCheck = now.advanced(by: storedCheckInterval)
            let checks = partitions.compactMap { partition, state -> StoredCheck? in
                guard state.isConsuming, let epoch = state.epoch, let storedThrough = state.storedThrough else {
                    return nil
                }
                return StoredCheck(partition: partition, epoch: epoch, storedThrough: storedThrough)
            }
            guard !checks.isEmpty else { return [] }
            isCheckingStored = true
            return [.checkStored(checks.sorted { $0.partition < $1.partition })]
        }

        /// A batch (at most ``maximumBatchSize`` messages, the oldest) of each partition that is consuming, not in
        /// flight and not waiting out a backoff, while fewer than ``maximumConcurrentBatches`` are in flight; the
        /// partitions that waited longest first.
        private mutating func startBatches(now: ContinuousClock.Instant) -> [PartitionBatch] {
            let free = maximumConcurrentBatches - partitions.values.count(where: \.isVerifying)
            guard free > 0 else { return [] }
            let chosen = partitions.longestWaitingKeys(
                free,
                where: { state in
                    state.isConsuming && state.epoch != nil && !state.inFlight && !state.queued.isEmpty
                        && (state.retryAt.map { $0 <= now } ?? true)
                },
                since: \.queuedSince
            )
            return chosen.map { takeBatch($0, limit: maximumBatchSize, now: now) }
        }

        /// Takes a batch of `partition`'s queue, whatever its backoff; the rest stays queued as if it just arrived.
        private mutating func takeBatch(
            _ partition: KafkaTopicPartition,
            limit: Int,
            now: ContinuousClock.Instant
        ) -> PartitionBatch {
            // Taken out while changed, so its queue is not copied.
            let queueLimit = self.queueLimit
            var state = partitions.removeValue(forKey: partition)!
            let count = min(state.queued.count, limit)
            guard let epoch = state.epoch else { preconditionFailure("a batch of \(partition) before its claim") }
            let batch = PartitionBatch(
                partition: partition,
                messages: Array(state.queued.prefix(count)),
                epoch: epoch,
                attempts: state.attempts,
                storedThroughOffset: state.storedThrough,
                // More than the batch takes, or as much as the partition may hold: messages are waiting, here or in
                // Kafka (the partition is paused for memory).
                isBehind: state.queued.count > count || state.queued.count >= queueLimit
            )
            state.queued.removeFirst(count)
            state.queuedSince = now
            state.attempts = 0
            state.retryAt = nil
            state.inFlight = true
            state.retrying = batch.attempts > 0
            partitions[partition] = state
            return batch
        }

        /// Moves each ending partition on as far as it can go now: after its batch in flight, one last batch of
        /// everything queued (if it is claimed: else the next owner consumes it), then one last commit of what is
        /// uncommitted (``startCommit(now:)``, after the commit running), then, once no commit running names it, it is
        /// let go (lost ones are let go once their batch in flight and a commit running ended).
        private mutating func advanceEndings(now: ContinuousClock.Instant) -> [Action] {
            var batches: [PartitionBatch] = []
            var handedOver: [KafkaTopicPartition] = []
            for partition in partitions.keys.sorted() {
                guard var state = partitions[partition], var ending = state.ending, !state.inFlight else { continue }
                if !ending.isLost, !ending.lastBatchStarted {
                    ending.lastBatchStarted = true
                    state.ending = ending
                    partitions[partition] = state
                    if !state.queued.isEmpty, state.epoch != nil {
                        batches.append(takeBatch(partition, limit: .max, now: now))
                        continue
                    }
                }
                // Its last commit is to start, or a commit naming it runs: the partition moves once it ended.
                if !ending.isLost, !ending.commitTried, state.uncommitted != nil { continue }
                if committing?[partition] != nil { continue }
                partitions[partition] = nil
                if ending.handsOver { handedOver.append(partition) }
            }
            var actions = batches.map(Action.startBatch)
            if !handedOver.isEmpty { actions.append(.handOver(handedOver)) }
            return actions
        }

        /// The one place a commit starts: unless one runs, a commit of every partition's offset to commit (lost
        /// partitions' and those whose last commit was tried aside), when a partition being given up waits for its
        /// last commit, or else once a refused commit's ``commitRetryInterval`` is over.
        private mutating func startCommit(now: ContinuousClock.Instant) -> [Action] {
            guard committing == nil else { return [] }
            var offsets: [KafkaTopicPartition: Int64] = [:]
            var last: [KafkaTopicPartition] = []
            for (partition, state) in partitions {
                guard let offset = state.uncommitted else { continue }
                if let ending = state.ending {
                    guard !ending.isLost, !ending.commitTried else { continue }
                    if ending.lastBatchStarted, !state.inFlight { last.append(partition) }
                }
                offsets[partition] = offset
            }
            guard !offsets.isEmpty, !last.isEmpty || now >= nextCommitAttempt else { return [] }
            for partition in last { partitions[partition]?.ending?.commitTried = true }
            committing = offsets
            return [
                .commit(offsets.sorted { $0.key < $1.key }.map { KafkaTopicPartitionOffset($0.key, offset: $0.value) })
            ]
        }

        /// Pauses consuming partitions that are waiting out a backoff (of a batch or of a claim) or hold their share of
        /// messages in memory (two polls' worth over all owned partitions), resumes the rest: memory stays bounded
        /// however many partitions a member owns and however slow one of them is. A partition being given up is left
        /// as it is.
        private mutating func applyPauses() -> [Action] {
            let limit = queueLimit
            var toPause: [KafkaTopicPartition] = []
            var toResume: [KafkaTopicPartition] = []
            for (partition, state) in partitions where state.isConsuming {
                let waiting = state.retryAt != nil || state.claimWaits || state.queued.count >= limit
                if waiting, !state.paused { toPause.append(partition) }
                if !waiting, state.paused { toResume.append(partition) }
            }
            // After the loop: a change while iterating would copy every partition's state.
            for partition in toPause { partitions[partition]?.paused = true }
            for partition in toResume { partitions[partition]?.paused = false }
            var actions: [Action] = []
            if !toPause.isEmpty { actions.append(.pause(toPause.sorted())) }
            if !toResume.isEmpty { actions.append(.resume(toResume.sorted())) }
            return actions
        }

        /// The messages a consuming partition may hold in memory before it is paused: its share of two polls.
        private var queueLimit: Int {
            max(16, 2 * maximumBatchSize / max(1, partitions.values.count(where: \.isConsuming)))
        }

        /// Exponential in the attempts, capped, with jitter.
        private func backoff(attempts: Int) -> Duration {
            let base = initialBackoff * (1 << min(attempts - 1, 16))
            return min(base, maximumBackoff) * jitter(0.75...1.25)
        }
    }
}
