import KafkaClient
import NotificationStore

extension OutboxDrain {
    /// What the drain knows of each owned partition's outbox, and which publications to start: pure, no Kafka or
    /// database, so every interleaving can be tested.
    ///
    /// A partition's rows are known two ways: rows this member's batches wrote (handed over as the write returned
    /// them, published without reading the table) and rows that may wait in the table (after an assignment, a failed
    /// batch whose COMMIT may have gone through, a failed publication, or rows a sweep found). At most one
    /// publication per partition runs at a time, so each partition's rows go out in order; partitions never wait
    /// for one another beyond ``maximumConcurrentPublications``.
    struct StateMachine {
        /// What one publication sends.
        enum Publication: Equatable {
            /// Rows this member wrote, with no older row of the partition left to publish.
            case written([OutboxMessage])
            /// Everything the table holds for the partition, oldest first.
            case table
        }

        /// How a publication ended.
        enum Outcome: Equatable {
            /// Every row it covered was published (or set aside); for a ``Publication/table`` publication, the
            /// highest row id it read, nil if none.
            case complete(throughID: Int64?)
            /// Some rows are left in the table (the broker or the database failed); try again after the retry
            /// interval.
            case incomplete
        }

        private struct Partition {
            /// Rows written by this member and not yet published, in id order.
            var written: [OutboxMessage] = []
            /// Reasons to read the table so far, and how many of them the last complete table read covered: a
            /// reason given while a read runs (a batch failing meanwhile) is not covered by it.
            var tableMarks = 0
            var coveredTableMarks = 0
            /// The publication running, and the table marks when it started.
            var running: (publication: Publication, tableMarks: Int)?
            /// The highest row id a complete table read published.
            var tableReadThrough = Int64.min
            /// After a failed publication: not before then.
            var retryAt: ContinuousClock.Instant?
            /// Since when work has waited (the longest-waiting partition is published first).
            var waitingSince: ContinuousClock.Instant?

            /// Rows may wait in the table that `written` does not hold.
            var inTable: Bool { tableMarks > coveredTableMarks }
            var hasWork: Bool { inTable || !written.isEmpty }
            var publishing: Bool { running != nil }

            mutating func markTable() { tableMarks += 1 }
        }

        let retryInterval: Duration
        let sweepInterval: Duration
        let maximumConcurrentPublications: Int
        /// The most written rows held over all partitions; past it, the partition whose rows arrive has them dropped
        /// and its table read instead, so publications that hang on unresponsive brokers do not let memory grow with
        /// everything stored meanwhile.
        let maximumHeldRows: Int
        private var partitions: [KafkaTopicPartition: Partition] = [:]
        private var nextSweep: ContinuousClock.Instant
        private var sweeps = 0

        init(
            retryInterval: Duration,
            sweepInterval: Duration,
            maximumConcurrentPublications: Int,
            maximumHeldRows: Int = 20_000,
            now: ContinuousClock.Instant
        ) {
            self.retryInterval = retryInterval
            self.sweepInterval = sweepInterval
            self.maximumConcurrentPublications = max(1, maximumConcurrentPublications)
            self.maximumHeldRows = max(1, maximumHeldRows)
            self.nextSweep = now.advanced(by: sweepInterval)
        }

        /// The partitions owned.
        var owned: Set<KafkaTopicPartition> { Set(partitions.keys) }

        /// Partitions with a publication running.
        var publishing: Set<KafkaTopicPartition> { Set(partitions.filter(\.value.publishing).keys) }

        /// Partitions with something to publish, running or not.
        var pending: Set<KafkaTopicPartition> {
            Set(partitions.filter { $0.value.hasWork || $0.value.publishing }.keys)
        }

        /// New partitions: a previous owner may have left rows in the table.
        mutating func assign(_ assigned: some Sequence<KafkaTopicPartition>, now: ContinuousClock.Instant) {
            for partition in assigned where partitions[partition] == nil {
                var state = Partition(waitingSince: now)
                state.markTable()
                partitions[partition] = state
            }
        }

        /// Forgets `revoked` partitions; returns those whose publication is still running (wait for it before the
        /// partition is handed over). Their outcome is ignored.
        mutating func revoke(_ revoked: some Sequence<KafkaTopicPartition>) -> Set<KafkaTopicPartition> {
            var running: Set<KafkaTopicPartition> = []
            for partition in revoked {
                if partitions.removeValue(forKey: partition)?.publishing == true { running.insert(partition) }
            }
            return running
        }

        /// A batch of `partition` stored and returned these rows (ascending ids).
        mutating func written(_ rows: [OutboxMessage], for partition: KafkaTopicPartition, now: ContinuousClock.Instant)
        {
            // Taken out while changed: appending to a copy that the dictionary shares would copy every row it holds.
            guard !rows.isEmpty, var state = partitions.removeValue(forKey: partition) else { return }
            // A table read that ended between the batch's commit and now (a sweep while the batch's result was on its
            // way) has published them already: they go no further. Should one of them not have been read after all
            // (a lower id committed later), it is still in the table, which is read again. (Ascending ids: when the
            // first is above the read, all are.)
            let fresh = rows[0].id > state.tableReadThrough ? rows : rows.filter { $0.id > state.tableReadThrough }
            if fresh.count < rows.count { state.markTable() }
            let rows = fresh
            // A table read yet to start will read them; one running may or may not, so they are kept until it ends.
            if !state.inTable || state.publishing { state.written += rows }
            let heldElsewhere = partitions.values.reduce(0) { $0 + $1.written.count }
            if heldElsewhere + state.written.count > maximumHeldRows {
                // They are in the table, in order with everything before them.
                state.written = []
                state.markTable()
            }
            if state.waitingSince == nil { state.waitingSince = now }
            partitions[partition] = state
        }

        /// Rows of `marked` may wait in the table: a batch failed (its COMMIT may have gone through), or a sweep
        /// found some.
        mutating func mayHaveRows(_ marked: some Sequence<KafkaTopicPartition>, now: ContinuousClock.Instant) {
            for partition in marked {
                guard var state = partitions[partition] else { continue }
                state.markTable()
                if state.waitingSince == nil { state.waitingSince = now }
                partitions[partition] = state
            }
        }

        /// The publications to start now (their partitions become busy): partitions with work, not publishing, not
        /// waiting out a retry, the longest-waiting first, up to the concurrency limit.
        mutating func nextPublications(now: ContinuousClock.Instant) -> [(KafkaTopicPartition, Publication)] {
            let free = maximumConcurrentPublications - partitions.values.count(where: \.publishing)
            guard free > 0 else { return [] }
            let chosen = partitions.longestWaitingKeys(
                free,
                where: { state in !state.publishing && state.hasWork && (state.retryAt.map { $0 <= now } ?? true) },
                since: { $0.waitingSince ?? now }
            )
            return chosen.map { partition in
                var state = partitions.removeValue(forKey: partition)!
                state.retryAt = nil
                let publication: Publication
                if state.inTable {
                    // Written rows stay until the read ends: those it did not reach go out after it.
                    publication = .table
                } else {
                    publication = .written(state.written)
                    state.written = []
                }
                state.running = (publication, state.tableMarks)
                partitions[partition] = state
                return (partition, publication)
            }
        }

        /// A publication of `partition` ended.
        mutating func finished(
            _ partition: KafkaTopicPartition,
            _ outcome: Outcome,
            now: ContinuousClock.Instant
        ) {
            // Taken out while changed, so that removing rows does not copy the rest.
            guard partitions[partition]?.running != nil, var state = partitions.removeValue(forKey: partition),
                let running = state.running
            else { return }
            state.running = nil
            switch outcome {
            case .complete(let throughID):
                if case .table = running.publication {
                    state.coveredTableMarks = running.tableMarks
                    if let throughID { state.tableReadThrough = max(state.tableReadThrough, throughID) }
                    // Rows written while the table was read and included in the read are published; later ones
                    // are not. A row the read missed although its id is lower is still in the table: the next
                    // sweep finds it.
                    state.written.removeAll { $0.id <= throughID ?? Int64.min }
                }
            case .incomplete:
                // Whatever is left is in the table, in order with everything written since.
                state.markTable()
                state.written = []
                state.retryAt = now.advanced(by: retryInterval)
            }
            // What is left after a complete publication (written meanwhile) queues behind the others; a failed
            // one keeps its place for its retry.
            if !state.hasWork {
                state.waitingSince = nil
            } else if case .complete = outcome {
                state.waitingSince = now
            }
            partitions[partition] = state
        }

        /// The owned partitions to look for rows in the table now, if a sweep is due (the next is scheduled): those
        /// with nothing to publish that this member knows of, whose rows in the table can only be someone else's
        /// (or a batch's that is about to be handed over: one extra read); every ``fullSweepEvery``-th sweep, all of
        /// them, so that a partition that is never idle is looked at too. (Sweeping busy partitions every time would
        /// turn their publications from the rows in memory into reads of the table, which cost far more.)
        mutating func sweepIfDue(now: ContinuousClock.Instant) -> Set<KafkaTopicPartition>? {
            guard now >= nextSweep else { return nil }
            nextSweep = now.advanced(by: sweepInterval)
            sweeps += 1
            if sweeps.isMultiple(of: Self.fullSweepEvery) { return owned }
            return Set(partitions.filter { !$0.value.hasWork && !$0.value.publishing }.keys)
        }

        /// Every how many sweeps all owned partitions are looked at, not only the idle ones.
        static let fullSweepEvery = 12

        /// Publish everything now, without waiting out retries (graceful shutdown: one last attempt).
        mutating func skipRetryWaits() {
            for partition in partitions.keys { partitions[partition]?.retryAt = nil }
        }

        /// When to look again without being told: the next retry or sweep, and no later than a retry interval from
        /// `now` (a publication running now may fail and need its retry).
        func nextDeadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant {
            let retries = partitions.values.filter { $0.hasWork && !$0.publishing }.compactMap(\.retryAt)
            return ([nextSweep, now.advanced(by: retryInterval)] + retries).min()!
        }
    }
}
