import AppStoreTestSupport
import KafkaClient
import NIOCore
import NotificationStore
import Testing

@testable import Worker

@Suite(
    "The worker's partition state machine: in order, one batch per partition, nothing skipped, nothing committed early",
    .tags(.fast)
)
struct WorkerStateMachineTests {
    typealias Machine = Worker.StateMachine
    typealias Action = Machine.Action

    static let p0 = KafkaTopicPartition(topic: "raw", partition: 0)
    static let p1 = KafkaTopicPartition(topic: "raw", partition: 1)
    static let p2 = KafkaTopicPartition(topic: "raw", partition: 2)
    static let start = ContinuousClock.now

    static func at(_ seconds: Double) -> ContinuousClock.Instant { start.advanced(by: .seconds(seconds)) }

    static func machine(
        batchSize: Int = 1_000,
        concurrency: Int = 8,
        initialBackoff: Duration = .seconds(1),
        maximumBackoff: Duration = .seconds(4),
        storedCheckInterval: Duration = .seconds(1_000_000)
    ) -> Machine {
        var configuration = WorkerConfiguration(
            consumer: KafkaConsumerConfiguration(cluster: .init(bootstrapServers: []), groupID: "g", topics: ["raw"])
        )
        configuration.maximumBatchSize = batchSize
        configuration.maximumConcurrentBatches = concurrency
        configuration.initialBackoff = initialBackoff
        configuration.maximumBackoff = maximumBackoff
        // Far off unless a test checks for a restore under a running member.
        configuration.storedOffsetCheckInterval = storedCheckInterval
        // No jitter: backoffs are exact.
        return Machine(configuration: configuration, now: start, jitter: { _ in 1 })
    }

    static func messages(_ partition: KafkaTopicPartition, _ offsets: ClosedRange<Int64>) -> [KafkaMessage] {
        offsets.map { offset in
            KafkaMessage(
                topic: partition.topic,
                partition: partition.partition,
                offset: offset,
                key: nil,
                value: ByteBuffer(string: "\(offset)"),
                headers: [],
                timestamp: nil
            )
        }
    }

    static func rows(_ ids: ClosedRange<Int64>) -> [OutboxMessage] {
        ids.map { OutboxMessage(id: $0, stream: .decoded, key: "k", payload: .missing) }
    }

    /// The batch's verification ended: its write is next.
    static func verified(_ batch: PartitionBatch) -> BatchOutcome {
        BatchOutcome(batch: batch, verified: NotificationBatch(fences: [batch.fence]))
    }

    static func stored(_ batch: PartitionBatch, rows: [OutboxMessage]? = []) -> BatchOutcome {
        BatchOutcome(batch: batch, stored: .init(outboxMessages: rows))
    }

    static func offset(_ partition: KafkaTopicPartition, _ offset: Int64) -> KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(partition, offset: offset)
    }

    static func failed(_ batch: PartitionBatch) -> BatchOutcome { BatchOutcome(batch: batch, stored: nil) }

    static func fenced(_ batch: PartitionBatch) -> BatchOutcome { BatchOutcome(batch: batch, notOwned: true) }

    static func behind(_ batch: PartitionBatch) -> BatchOutcome { BatchOutcome(batch: batch, storedBehind: true) }

    /// Claims of these epochs, the database's stored offset unknown (nothing to compare).
    static func claimed(_ epochs: [KafkaTopicPartition: Int64]) -> [KafkaTopicPartition: PartitionClaim] {
        epochs.mapValues { PartitionClaim(epoch: $0, storedThroughOffset: nil) }
    }

    /// The claims among `actions`.
    static func claims(_ actions: [Action]) -> [Machine.ClaimRequest] {
        actions.flatMap { action -> [Machine.ClaimRequest] in
            guard case .claim(let requests) = action else { return [] }
            return requests
        }
    }

    /// `partitions` assigned at `now` and their claim ended at once with `epoch`.
    static func own(
        _ machine: inout Machine,
        _ partitions: [KafkaTopicPartition],
        now: ContinuousClock.Instant,
        epoch: Int64 = 1
    ) {
        let requests = claims(machine.assigned(partitions, now: now))
        _ = machine.claimEnded(
            requests,
            claims: claimed(Dictionary(uniqueKeysWithValues: requests.map { ($0.partition, epoch) })),
            now: now
        )
    }

    /// The batches among `actions`.
    static func batches(_ actions: [Action]) -> [PartitionBatch] {
        actions.compactMap { if case .startBatch(let batch) = $0 { batch } else { nil } }
    }

    /// The batches written among `actions` (their verification ended).
    static func writes(_ actions: [Action]) -> [PartitionBatch] {
        actions.compactMap { if case .writeBatch(let batch, _) = $0 { batch } else { nil } }
    }

    /// The actions other than batches and their writes, described, for comparison.
    static func others(_ actions: [Action]) -> [String] {
        actions.compactMap { action in
            switch action {
            case .startBatch, .writeBatch: nil
            case .claim(let requests): "claim \(requests.map(\.partition.partition))"
            case .commit(let offsets): "commit \(offsets.map { "\($0.topicPartition.partition)@\($0.offset)" })"
            case .pause(let partitions): "pause \(partitions.map(\.partition))"
            case .resume(let partitions): "resume \(partitions.map(\.partition))"
            case .assignOutputs(let partitions): "assignOutputs \(partitions.map(\.partition))"
            case .publishWritten(let rows, let partition):
                "publishWritten \(rows.map { "\($0.map(\.id))" } ?? "nil") \(partition.partition)"
            case .publishFromTable(let partitions): "publishFromTable \(partitions.map(\.partition))"
            case .handOver(let partitions): "handOver \(partitions.map(\.partition))"
            case .withdrawOutputs(let partitions): "withdrawOutputs \(partitions.map(\.partition))"
            case .rewind(let offset, let from):
                "rewind \(offset.topicPartition.partition)@\(offset.offset) from \(from)"
            case .checkStored(let checks):
                "checkStored \(checks.map { "\($0.partition.partition)@\($0.storedThrough) epoch \($0.epoch)" })"
            }
        }
    }

    static func offsets(_ batch: PartitionBatch) -> [Int64] { batch.messages.map(\.offset) }

    /// A machine owning p0, with a batch of `offsets` in flight since 0.
    static func batchInFlight(_ offsets: ClosedRange<Int64>, batchSize: Int = 1_000) throws -> (Machine, PartitionBatch)
    {
        var machine = Self.machine(batchSize: batchSize)
        Self.own(&machine, [p0], now: at(0))
        machine.received(messages(p0, offsets), now: at(0))
        let batch = try #require(batches(machine.tick(now: at(0))).first)
        return (machine, batch)
    }

    @Test(
        "Assigned partitions are claimed, then go to the drain; a partition's messages form one batch, and its next waits for it"
    )
    func assignmentAndBatches() throws {
        var machine = Self.machine()
        let claim = machine.assigned([Self.p1, Self.p0], now: Self.at(0))
        #expect(Self.others(claim) == ["claim [0, 1]"])
        #expect(machine.assigned([Self.p0], now: Self.at(0)).isEmpty, "already owned")
        let claimed = machine.claimEnded(
            Self.claims(claim),
            claims: Self.claimed([Self.p0: 3, Self.p1: 1]),
            now: Self.at(0)
        )
        #expect(Self.others(claimed) == ["assignOutputs [0, 1]"])
        machine.received(Self.messages(Self.p0, 0...4), now: Self.at(0))
        let first = try #require(Self.batches(machine.tick(now: Self.at(0))).first)
        #expect(Self.offsets(first) == [0, 1, 2, 3, 4] && first.attempts == 0)
        #expect(first.epoch == 3, "the batch carries its claim's epoch")
        #expect(!first.isBehind, "it took everything queued")
        machine.received(Self.messages(Self.p0, 5...6), now: Self.at(0.1))
        #expect(Self.batches(machine.tick(now: Self.at(0.1))).isEmpty, "one batch per partition in flight")
        let ended = machine.batchEnded(Self.stored(first, rows: Self.rows(1...2)), now: Self.at(0.2))
        #expect(Self.others(ended) == ["publishWritten [1, 2] 0", "commit [\"0@5\"]"], "stored, then committed")
        #expect(Self.batches(machine.tick(now: Self.at(0.2))).map(Self.offsets) == [[5, 6]])
        #expect(machine.uncommitted == [Self.p0: 5])
        _ = machine.commitEnded([Self.offset(Self.p0, 5)], committed: true, now: Self.at(0.3))
        #expect(machine.uncommitted.isEmpty)
    }

    @Test("Batches hold at most the batch size; at most the configured batches at once, the longest-waiting first")
    func batchSizeAndFairness() {
        var machine = Self.machine(batchSize: 3, concurrency: 2)
        Self.own(&machine, [Self.p0, Self.p1, Self.p2], now: Self.at(0))
        machine.received(Self.messages(Self.p0, 0...4), now: Self.at(0))
        machine.received(Self.messages(Self.p1, 0...0), now: Self.at(1))
        machine.received(Self.messages(Self.p2, 0...0), now: Self.at(2))
        let first = Self.batches(machine.tick(now: Self.at(3)))
        #expect(first.map(\.partition) == [Self.p0, Self.p1])
        #expect(Self.offsets(first[0]) == [0, 1, 2])
        #expect(first[0].isBehind && !first[1].isBehind, "p0 left two messages queued")
        _ = machine.batchEnded(Self.stored(first[0]), now: Self.at(4))
        // p2 has waited since 2, p0's rest since its batch was taken at 3.
        #expect(Self.batches(machine.tick(now: Self.at(4))).map(\.partition) == [Self.p2])
        _ = machine.batchEnded(Self.stored(first[1]), now: Self.at(5))
        #expect(Self.batches(machine.tick(now: Self.at(5))).map(Self.offsets) == [[3, 4]])
    }

    @Test(
        "A batch verified makes room for another partition's while its write follows; an attempt after a failure keeps its place until it ended; outcomes naming no batch in flight, or a batch being written, change nothing"
    )
    func verifiedBatchesMakeRoom() throws {
        var machine = Self.machine(concurrency: 1)
        Self.own(&machine, [Self.p0, Self.p1, Self.p2], now: Self.at(0))
        machine.received(Self.messages(Self.p0, 0...1), now: Self.at(0))
        machine.received(Self.messages(Self.p1, 0...0), now: Self.at(0))
        machine.received(Self.messages(Self.p2, 0...0), now: Self.at(0))
        let first = try #require(Self.batches(machine.tick(now: Self.at(0))).first)
        #expect(first.partition == Self.p0)
        #expect(Self.batches(machine.tick(now: Self.at(0))).isEmpty, "p0's batch is being verified")
        let notInFlight = PartitionBatch(partition: Self.p1, messages: Self.messages(Self.p1, 0...0), epoch: 1)
        #expect(machine.batchEnded(Self.verified(notInFlight), now: Self.at(0)).isEmpty, "no batch of p1 in flight")
        #expect(machine.batchEnded(Self.stored(notInFlight), now: Self.at(0)).isEmpty, "no batch of p1 in flight")
        #expect(machine.verifying == [Self.p0] && machine.inFlight == [Self.p0])
        let write = machine.batchEnded(Self.verified(first), now: Self.at(0))
        #expect(Self.writes(write).map(Self.offsets) == [[0, 1]] && Self.others(write).isEmpty)
        #expect(machine.verifying.isEmpty && machine.inFlight == [Self.p0], "in flight until its write ended")
        #expect(machine.batchEnded(Self.verified(first), now: Self.at(0)).isEmpty, "its write runs already")
        let second = try #require(Self.batches(machine.tick(now: Self.at(0))).first)
        #expect(second.partition == Self.p1)
        #expect(Self.batches(machine.tick(now: Self.at(0))).isEmpty, "p1's batch is being verified")

        // p0's write fails: tried again after its backoff, and that attempt keeps its place once verified.
        _ = machine.batchEnded(Self.failed(first), now: Self.at(0.1))
        #expect(Self.writes(machine.batchEnded(Self.verified(second), now: Self.at(0.2))).map(\.partition) == [Self.p1])
        _ = machine.batchEnded(Self.stored(second), now: Self.at(0.2))
        let third = try #require(Self.batches(machine.tick(now: Self.at(0.2))).first)
        #expect(third.partition == Self.p2)
        _ = machine.batchEnded(Self.verified(third), now: Self.at(0.3))
        let retry = try #require(Self.batches(machine.tick(now: Self.at(2))).first)
        #expect(retry.partition == Self.p0 && retry.attempts == 1 && retry.nextOffset.offset == 2)
        machine.received(Self.messages(Self.p1, 1...1), now: Self.at(2))
        #expect(Self.writes(machine.batchEnded(Self.verified(retry), now: Self.at(2))).map(\.partition) == [Self.p0])
        #expect(machine.verifying == [Self.p0])
        #expect(Self.batches(machine.tick(now: Self.at(2))).isEmpty, "the attempt after a failure keeps its place")
        _ = machine.batchEnded(Self.stored(retry), now: Self.at(2.1))
        #expect(Self.batches(machine.tick(now: Self.at(2.1))).map(Self.offsets) == [[1]])
    }

    @Test(
        "Lost while its batch is verified: the write still follows (the fence refuses it if need be); let go after it"
    )
    func lostBetweenVerificationAndWrite() throws {
        var (machine, batch) = try Self.batchInFlight(0...1)
        #expect(machine.revoke([Self.p0], isLost: true, now: Self.at(0.1)).isEmpty)
        #expect(machine.endingInFlight == [Self.p0])
        let write = machine.batchEnded(Self.verified(batch), now: Self.at(0.2))
        #expect(Self.writes(write).map(Self.offsets) == [[0, 1]] && Self.others(write).isEmpty)
        #expect(machine.endingInFlight == [Self.p0], "waiting for its write")
        #expect(Self.others(machine.batchEnded(Self.stored(batch), now: Self.at(0.3))) == ["handOver [0]"])
        #expect(machine.owned.isEmpty && machine.uncommitted.isEmpty)
    }

    @Test("A failed batch: paused, tried again after its backoff with what arrived since, backoffs doubling to the cap")
    func failedBatchBacksOff() throws {
        var machine = Self.machine(initialBackoff: .seconds(1), maximumBackoff: .seconds(3))
        Self.own(&machine, [Self.p0], now: Self.at(0))
        machine.received(Self.messages(Self.p0, 0...1), now: Self.at(0))
        var batch = try #require(Self.batches(machine.tick(now: Self.at(0))).first)
        machine.received(Self.messages(Self.p0, 2...2), now: Self.at(0.1))
        var clock = 0.5
        for (attempt, backoff) in [(1, 1.0), (2, 2.0), (3, 3.0), (4, 3.0)] {
            // Its COMMIT may have gone through: the drain reads the table.
            #expect(
                Self.others(machine.batchEnded(Self.failed(batch), now: Self.at(clock))) == ["publishFromTable [0]"]
            )
            #expect(Self.others(machine.tick(now: Self.at(clock))) == ["pause [0]"])
            #expect(Self.batches(machine.tick(now: Self.at(clock + backoff - 0.01))).isEmpty, "attempt \(attempt)")
            let retry = machine.tick(now: Self.at(clock + backoff))
            batch = try #require(Self.batches(retry).first)
            #expect(Self.others(retry) == ["resume [0]"])
            #expect(batch.attempts == attempt)
            #expect(Self.offsets(batch) == [0, 1, 2], "the failed messages, then those that arrived since")
            clock += backoff + 0.5
        }
        _ = machine.batchEnded(Self.stored(batch), now: Self.at(clock))
        machine.received(Self.messages(Self.p0, 3...3), now: Self.at(clock))
        let next = try #require(Self.batches(machine.tick(now: Self.at(clock))).first)
        #expect(next.attempts == 0, "a stored batch starts the count again")
    }

    @Test(
        "Stored batches are committed by the machine, one commit at a time: those that ended together in one, those stored while a commit runs in the next; a refused commit is made again every half second"
    )
    func commitsRetried() throws {
        var machine = Self.machine()
        Self.own(&machine, [Self.p0, Self.p1, Self.p2], now: Self.at(0))
        machine.received(Self.messages(Self.p0, 0...9) + Self.messages(Self.p1, 0...4), now: Self.at(0))
        let first = Self.batches(machine.tick(now: Self.at(0)))
        #expect(first.map(\.partition) == [Self.p0, Self.p1])
        #expect(machine.uncommitted.isEmpty && !machine.isCommitting, "nothing stored, nothing to commit")
        let ended = machine.batchesEnded(first.map { Self.stored($0) }, now: Self.at(0.1))
        #expect(Self.others(ended).filter { $0.hasPrefix("commit") } == ["commit [\"0@10\", \"1@5\"]"])
        #expect(machine.isCommitting && machine.uncommitted == [Self.p0: 10, Self.p1: 5])

        // Refused: not again before the retry interval.
        #expect(machine.commitEnded(ended.commits, committed: false, now: Self.at(0.2)).isEmpty)
        #expect(Self.others(machine.tick(now: Self.at(0.6))).isEmpty, "within the retry interval")
        let retry = machine.tick(now: Self.at(0.7))
        #expect(Self.others(retry) == ["commit [\"0@10\", \"1@5\"]"])

        // Batches stored while it runs: their offsets wait for it, and go in the next commit, the highest of each.
        machine.received(Self.messages(Self.p0, 10...14) + Self.messages(Self.p2, 0...0), now: Self.at(0.7))
        let second = Self.batches(machine.tick(now: Self.at(0.7)))
        #expect(Set(second.map(\.partition)) == [Self.p0, Self.p2])
        #expect(Self.others(machine.batchesEnded(second.map { Self.stored($0) }, now: Self.at(0.8))).count == 2)
        #expect(!Self.others(machine.tick(now: Self.at(2))).contains { $0.hasPrefix("commit") }, "one at a time")
        let next = machine.commitEnded(retry.commits, committed: true, now: Self.at(2.1))
        #expect(Self.others(next) == ["commit [\"0@15\", \"2@1\"]"], "p1's offset held; p0's later one is due")
        #expect(machine.uncommitted == [Self.p0: 15, Self.p2: 1])
        _ = machine.commitEnded(next.commits, committed: true, now: Self.at(2.2))
        #expect(machine.uncommitted.isEmpty && !machine.isCommitting)
        #expect(Self.others(machine.tick(now: Self.at(3))).isEmpty)
    }

    @Test(
        "A rewind while a commit of a later offset runs: that commit's end leaves the lower offset to commit, and the next commit takes the group back"
    )
    func rewindWhileCommitting() throws {
        var (machine, batch) = try Self.batchInFlight(0...9)
        let committing = machine.batchEnded(Self.stored(batch), now: Self.at(0.1))
        #expect(committing.commits == [Self.offset(Self.p0, 10)])
        machine.received(Self.messages(Self.p0, 10...11), now: Self.at(0.1))
        let behind = try #require(Self.batches(machine.tick(now: Self.at(0.2))).first)
        _ = machine.batchEnded(Self.behind(behind), now: Self.at(0.3))
        let claim = Self.claims(machine.tick(now: Self.at(0.3)))
        let rewound = machine.claimEnded(
            claim,
            claims: [Self.p0: PartitionClaim(epoch: 2, storedThroughOffset: 4)],
            now: Self.at(0.4)
        )
        #expect(Self.others(rewound) == ["rewind 0@4 from 10", "assignOutputs [0]"])
        #expect(machine.uncommitted == [Self.p0: 4])
        let after = machine.commitEnded(committing.commits, committed: true, now: Self.at(0.5))
        #expect(Self.others(after) == ["commit [\"0@4\"]"], "the group follows the database back")
        _ = machine.commitEnded(after.commits, committed: true, now: Self.at(0.6))
        #expect(machine.uncommitted.isEmpty)
    }

    @Test("A partition holding more than its share of messages is paused, and resumed once its batches caught up")
    func memoryBound() throws {
        // Share: max(16, 2 × 10 / 1 partition) = 20 messages.
        var (machine, first) = try Self.batchInFlight(0...9, batchSize: 10)
        machine.received(Self.messages(Self.p0, 10...28), now: Self.at(0.1))
        #expect(Self.others(machine.tick(now: Self.at(0.1))).isEmpty, "19 messages")
        machine.received(Self.messages(Self.p0, 29...29), now: Self.at(0.1))
        #expect(Self.others(machine.tick(now: Self.at(0.1))) == ["pause [0]"])
        #expect(machine.paused == [Self.p0])
        _ = machine.batchEnded(Self.stored(first), now: Self.at(0.2))
        let next = machine.tick(now: Self.at(0.2))
        #expect(Self.batches(next).map(Self.offsets) == [Array(10...19)])
        #expect(!first.isBehind && Self.batches(next).allSatisfy(\.isBehind), "the partition held its share")
        #expect(Self.others(next) == ["resume [0]"])
        #expect(machine.paused.isEmpty)
    }

    @Test(
        "Revoked: the batch in flight ends, the rest is stored in one last batch, offsets committed, then handed over"
    )
    func revocation() throws {
        var machine = Self.machine(batchSize: 2, concurrency: 1)
        Self.own(&machine, [Self.p0, Self.p1], now: Self.at(0))
        machine.received(Self.messages(Self.p0, 0...4), now: Self.at(0))
        machine.received(Self.messages(Self.p1, 0...0), now: Self.at(0.1))
        let inFlight = try #require(Self.batches(machine.tick(now: Self.at(0))).first)
        #expect(machine.revoke([Self.p0], isLost: false, now: Self.at(1)).isEmpty)
        #expect(machine.endingInFlight == [Self.p0])
        machine.received(Self.messages(Self.p0, 5...5), now: Self.at(1))
        // Its rows stay in the table for the next owner, which reads it on assignment; the last batch takes
        // everything queued, beyond the batch size and the concurrency limit.
        let ended = machine.batchEnded(Self.stored(inFlight, rows: Self.rows(1...1)), now: Self.at(2))
        #expect(Self.others(ended) == ["commit [\"0@2\"]"], "what is stored is committed meanwhile")
        let last = try #require(Self.batches(ended).first)
        #expect(Self.offsets(last) == [2, 3, 4], "the message polled after the revocation is not taken")
        #expect(machine.endingInFlight == [Self.p0])
        #expect(Self.others(machine.batchEnded(Self.stored(last), now: Self.at(3))).isEmpty, "a commit runs")
        #expect(!machine.endingInFlight.contains(Self.p0) && machine.endingWaitsForCommit)
        let committing = machine.commitEnded(ended.commits, committed: true, now: Self.at(3.05))
        #expect(Self.others(committing) == ["commit [\"0@5\"]"], "its last commit, after the one that ran")
        // Handed over whether the commit held or not: the next owner finds duplicates at worst.
        let handedOver = machine.commitEnded(committing.commits, committed: false, now: Self.at(3.1))
        #expect(Self.others(handedOver) == ["handOver [0]"])
        #expect(!machine.endingWaitsForCommit)
        #expect(machine.owned == [Self.p1])
        #expect(machine.endingInFlight.isEmpty)
        #expect(Self.batches(machine.tick(now: Self.at(4))).map(\.partition) == [Self.p1])
    }

    @Test("Revoked while waiting out a backoff: one last attempt at once; if it fails, handed over uncommitted")
    func revocationDuringBackoff() throws {
        var (machine, batch) = try Self.batchInFlight(0...1)
        _ = machine.batchEnded(Self.failed(batch), now: Self.at(0.1))
        _ = machine.tick(now: Self.at(0.1))
        let last = try #require(Self.batches(machine.revoke([Self.p0], isLost: false, now: Self.at(0.2))).first)
        #expect(Self.offsets(last) == [0, 1] && last.attempts == 1)
        let ended = machine.batchEnded(Self.failed(last), now: Self.at(0.3))
        #expect(Self.others(ended) == ["handOver [0]"], "no publication from the table: the next owner reads it")
        #expect(machine.owned.isEmpty && machine.paused.isEmpty)
    }

    @Test("Lost: the batch in flight ends; nothing more is stored, committed or published; handed over at once")
    func lost() throws {
        var machine = Self.machine(batchSize: 2)
        Self.own(&machine, [Self.p0, Self.p1], now: Self.at(0))
        machine.received(Self.messages(Self.p0, 0...3), now: Self.at(0))
        let batch = try #require(Self.batches(machine.tick(now: Self.at(0))).first)
        #expect(Self.others(machine.revoke([Self.p1], isLost: true, now: Self.at(0.5))) == ["handOver [1]"])
        #expect(machine.revoke([Self.p0], isLost: true, now: Self.at(1)).isEmpty)
        let ended = machine.batchEnded(Self.stored(batch, rows: Self.rows(1...1)), now: Self.at(2))
        #expect(Self.others(ended) == ["handOver [0]"])
        #expect(machine.owned.isEmpty && machine.uncommitted.isEmpty)
        #expect(machine.batchEnded(Self.stored(batch), now: Self.at(3)).isEmpty, "an outcome nobody waits for")
    }

    @Test("Shutdown: batches in flight end, one last batch of what is queued, outputs stay with the drain")
    func shutdown() throws {
        var machine = Self.machine(batchSize: 1, concurrency: 1)
        Self.own(&machine, [Self.p0, Self.p1], now: Self.at(0))
        machine.received(Self.messages(Self.p0, 0...0), now: Self.at(0))
        let inFlight = try #require(Self.batches(machine.tick(now: Self.at(0))).first)
        machine.received(Self.messages(Self.p1, 0...2), now: Self.at(0.1))
        let finishing = machine.shutDown(now: Self.at(1))
        #expect(Self.batches(finishing).map(Self.offsets) == [[0, 1, 2]], "p1's last batch, beyond the limits")
        #expect(machine.endingInFlight == [Self.p0, Self.p1])
        let p0Ended = machine.batchEnded(Self.stored(inFlight, rows: Self.rows(1...1)), now: Self.at(2))
        #expect(Self.others(p0Ended) == ["publishWritten [1] 0", "commit [\"0@1\"]"])
        let p1Ended = machine.batchEnded(Self.stored(Self.batches(finishing)[0], rows: nil), now: Self.at(2))
        #expect(Self.others(p1Ended) == ["publishWritten nil 1"], "after the commit running")
        #expect(machine.endingInFlight.isEmpty && machine.endingWaitsForCommit)
        let p1Commit = machine.commitEnded(p0Ended.commits, committed: true, now: Self.at(2.5))
        #expect(Self.others(p1Commit) == ["commit [\"1@3\"]"])
        #expect(machine.owned == [Self.p1])
        #expect(Self.others(machine.commitEnded(p1Commit.commits, committed: true, now: Self.at(3))).isEmpty)
        #expect(machine.owned.isEmpty)
    }

    @Test("Messages of a partition not owned are ignored")
    func notOwned() {
        var machine = Self.machine()
        machine.received(Self.messages(Self.p2, 0...3), now: Self.at(0))
        #expect(machine.tick(now: Self.at(0)).isEmpty)
        #expect(machine.owned.isEmpty)
    }

    /// One simulated partition of the raw topic and what the group and the database know of it.
    struct SimulatedPartition {
        /// Messages in the log: offsets 0..<end.
        var end: Int64 = 0
        /// The next offset the consumer hands out (while owned).
        var position: Int64 = 0
        /// The group's committed offset.
        var committed: Int64 = 0
        /// Offsets stored in the database.
        var stored: Set<Int64> = []
        /// Offsets batches stored, a restore notwithstanding: nothing else may be committed (a commit due before the
        /// member found the restore is taken back by its rewind).
        var written: Set<Int64> = []
        /// The database's `stored_through_offset`: everything below it is in ``stored``; restores take it back.
        var storedThrough: Int64 = 0
        /// The offset of the last rewind: the group's committed offset may go back to it, no further.
        var rewoundTo: Int64?
        /// The offset the next batch must start at.
        var nextBatch: Int64 = 0
        var batchInFlight: PartitionBatch?
        /// The batch in flight is verified and being written.
        var writing = false
        /// The last batch started, for outcomes naming no batch in flight.
        var lastBatch: PartitionBatch?
        var owned = false
        var paused = false
        /// Being given up: no publication of its rows by this member.
        var revoking = false
    }

    @Test(
        "Until its claim ends no batch of a partition starts and the drain does not take it; a failed claim is tried again (the same owner) after a backoff, the partition paused meanwhile"
    )
    func claimBeforeBatches() throws {
        var machine = Self.machine()
        let claim = Self.claims(machine.assigned([Self.p0], now: Self.at(0)))
        #expect(claim.map(\.partition) == [Self.p0])
        machine.received(Self.messages(Self.p0, 0...2), now: Self.at(0))
        #expect(machine.isClaiming)
        #expect(Self.batches(machine.tick(now: Self.at(0.1))).isEmpty, "no batch before the claim")
        #expect(machine.assigned([Self.p1], now: Self.at(0.1)).isEmpty, "one claim at a time")
        let failed = machine.claimEnded(claim, claims: nil, now: Self.at(0.2))
        #expect(Self.others(failed) == ["claim [1]"], "p1's claim starts; p0's waits out its backoff")
        #expect(Self.others(machine.tick(now: Self.at(0.3))) == ["pause [0]"], "paused while its claim waits")
        let p1Claimed = machine.claimEnded(Self.claims(failed), claims: Self.claimed([Self.p1: 1]), now: Self.at(0.4))
        #expect(Self.others(p1Claimed) == ["assignOutputs [1]"], "p0 still not the drain's")
        // The backoff (1 s) ends at 1.2.
        #expect(machine.tick(now: Self.at(1.1)).isEmpty)
        let retry = machine.tick(now: Self.at(1.25))
        #expect(Self.claims(retry) == claim, "the same assignment: the same owner")
        #expect(Self.others(retry) == ["claim [0]", "resume [0]"])
        #expect(
            Self.others(machine.claimEnded(claim, claims: Self.claimed([Self.p0: 2]), now: Self.at(1.3))) == [
                "assignOutputs [0]"
            ]
        )
        let started = Self.batches(machine.tick(now: Self.at(1.3)))
        #expect(started.map(Self.offsets) == [[0, 1, 2]])
        #expect(started.first?.epoch == 2)
    }

    @Test(
        "A partition revoked while its claim runs is handed over with nothing stored; that claim's outcome changes nothing, and the partition assigned again is claimed anew"
    )
    func revokedWhileClaiming() {
        var machine = Self.machine()
        let claim = Self.claims(machine.assigned([Self.p0], now: Self.at(0)))
        machine.received(Self.messages(Self.p0, 0...2), now: Self.at(0))
        let revoked = machine.revoke([Self.p0], isLost: false, now: Self.at(0.1))
        #expect(Self.others(revoked) == ["handOver [0]"] && Self.batches(revoked).isEmpty, "no last batch unclaimed")
        #expect(machine.owned.isEmpty)
        #expect(machine.assigned([Self.p0], now: Self.at(0.2)).isEmpty, "the first claim still runs")
        let ended = machine.claimEnded(claim, claims: Self.claimed([Self.p0: 1]), now: Self.at(0.3))
        #expect(Self.others(ended) == ["claim [0]"], "not the new assignment's claim: it makes its own")
        #expect(Self.claims(ended).first?.assignment != claim.first?.assignment, "under a new owner name")
        machine.received(Self.messages(Self.p0, 0...0), now: Self.at(0.3))
        #expect(Self.batches(machine.tick(now: Self.at(0.4))).isEmpty)
    }

    @Test(
        "A batch refused by the fence: nothing committed, the drain lets the partition go, no retry of the batch; only if no revocation comes, a claim again after a backoff, the messages still in order"
    )
    func fencedBatch() throws {
        let (inFlight, batch) = try Self.batchInFlight(0...2)
        var machine = inFlight
        machine.received(Self.messages(Self.p0, 3...4), now: Self.at(0.1))
        #expect(Self.others(machine.batchEnded(Self.fenced(batch), now: Self.at(0.2))) == ["withdrawOutputs [0]"])
        #expect(machine.uncommitted.isEmpty)
        let waiting = machine.tick(now: Self.at(0.3))
        #expect(Self.batches(waiting).isEmpty && Self.claims(waiting).isEmpty, "no batch, no claim yet")
        #expect(Self.others(waiting) == ["pause [0]"])
        #expect(machine.tick(now: Self.at(1.1)).isEmpty)
        let requests = Self.claims(machine.tick(now: Self.at(1.25)))
        #expect(requests.map(\.partition) == [Self.p0])
        #expect(
            Self.others(machine.claimEnded(requests, claims: Self.claimed([Self.p0: 5]), now: Self.at(1.3))) == [
                "assignOutputs [0]"
            ]
        )
        let batches = Self.batches(machine.tick(now: Self.at(1.3)))
        #expect(batches.map(Self.offsets) == [[0, 1, 2, 3, 4]])
        #expect(batches.first?.epoch == 5)

        // Fenced again, and the revocation comes: handed over with nothing stored, no claim.
        let (otherInFlight, refused) = try Self.batchInFlight(0...2)
        var revokedMachine = otherInFlight
        _ = revokedMachine.batchEnded(Self.fenced(refused), now: Self.at(0.2))
        let handedOver = revokedMachine.revoke([Self.p0], isLost: false, now: Self.at(0.3))
        #expect(Self.others(handedOver) == ["handOver [0]"] && Self.batches(handedOver).isEmpty)
        #expect(Self.claims(revokedMachine.tick(now: Self.at(5))).isEmpty)
    }

    @Test(
        "A claim that finds the database behind the committed offset rewinds the partition there: the queue dropped, the lower offset committed, batches expecting it"
    )
    func rewindOnClaim() throws {
        var machine = Self.machine()
        let claim = Self.claims(
            machine.assigned([Self.p0, Self.p1], committed: [Self.p0: 10, Self.p1: 10], now: Self.at(0))
        )
        machine.received(Self.messages(Self.p0, 10...12) + Self.messages(Self.p1, 10...12), now: Self.at(0))
        let claimed = machine.claimEnded(
            claim,
            claims: [
                Self.p0: PartitionClaim(epoch: 1, storedThroughOffset: 4),
                Self.p1: PartitionClaim(epoch: 1, storedThroughOffset: 12),
            ],
            now: Self.at(0.1)
        )
        #expect(Self.others(claimed) == ["rewind 0@4 from 10", "assignOutputs [0, 1]"])
        let ticked = machine.tick(now: Self.at(0.2))
        #expect(Self.batches(ticked).map(\.partition) == [Self.p1], "p0's queue was dropped")
        #expect(Self.batches(ticked).first?.storedThroughOffset == 10, "ahead of the group: its offset holds")
        #expect(Self.others(ticked) == ["commit [\"0@4\"]"], "the group follows the database back")
        _ = machine.commitEnded([KafkaTopicPartitionOffset(Self.p0, offset: 4)], committed: true, now: Self.at(0.3))
        machine.received(Self.messages(Self.p0, 4...6), now: Self.at(0.3))
        let again = try #require(Self.batches(machine.tick(now: Self.at(0.4))).first)
        #expect(Self.offsets(again) == [4, 5, 6])
        #expect(again.storedThroughOffset == 4)
        _ = machine.batchEnded(Self.stored(again), now: Self.at(0.5))
        machine.received(Self.messages(Self.p0, 7...7), now: Self.at(0.5))
        #expect(Self.batches(machine.tick(now: Self.at(0.6))).first?.storedThroughOffset == 7)

        // Unknown to the database (an upgrade): nothing rewound, nothing expected of the first batch.
        var upgraded = Self.machine()
        let requests = Self.claims(upgraded.assigned([Self.p0], committed: [Self.p0: 10], now: Self.at(0)))
        let ended = upgraded.claimEnded(
            requests,
            claims: [Self.p0: PartitionClaim(epoch: 1, storedThroughOffset: nil)],
            now: Self.at(0)
        )
        #expect(Self.others(ended) == ["assignOutputs [0]"])
        upgraded.received(Self.messages(Self.p0, 10...11), now: Self.at(0))
        let first = try #require(Self.batches(upgraded.tick(now: Self.at(0.1))).first)
        #expect(first.storedThroughOffset == nil)
    }

    @Test(
        "A batch the database turns out to be behind (restored under the member): nothing committed, the partition claimed again at once, and rewound to what the claim finds"
    )
    func rewindAfterABatchFoundBehind() throws {
        let (inFlight, batch) = try Self.batchInFlight(0...2)
        var machine = inFlight
        _ = machine.batchEnded(Self.stored(batch), now: Self.at(0.1))
        machine.received(Self.messages(Self.p0, 3...5), now: Self.at(0.1))
        let next = try #require(Self.batches(machine.tick(now: Self.at(0.2))).first)
        #expect(next.storedThroughOffset == 3)
        #expect(Self.others(machine.batchEnded(Self.behind(next), now: Self.at(0.3))) == ["withdrawOutputs [0]"])
        let reclaim = machine.tick(now: Self.at(0.3))
        #expect(Self.others(reclaim) == ["claim [0]"], "at once, no pause")
        let rewound = machine.claimEnded(
            Self.claims(reclaim),
            claims: [Self.p0: PartitionClaim(epoch: 2, storedThroughOffset: 1)],
            now: Self.at(0.4)
        )
        #expect(Self.others(rewound) == ["rewind 0@1 from 3", "assignOutputs [0]"])
        #expect(machine.uncommitted == [Self.p0: 1])
        machine.received(Self.messages(Self.p0, 1...5), now: Self.at(0.5))
        let replay = try #require(Self.batches(machine.tick(now: Self.at(0.5))).first)
        #expect(Self.offsets(replay) == [1, 2, 3, 4, 5])
        #expect(replay.epoch == 2 && replay.storedThroughOffset == 1)
    }

    @Test(
        "The periodic check: a partition whose row went back (its stored offset, or its epoch) is claimed again; one in flight, claimed meanwhile, or as expected is left alone"
    )
    func storedCheck() throws {
        var machine = Self.machine(storedCheckInterval: .seconds(30))
        Self.own(&machine, [Self.p0, Self.p1, Self.p2], now: Self.at(0))
        for partition in [Self.p0, Self.p1, Self.p2] {
            machine.received(Self.messages(partition, 0...1), now: Self.at(0))
        }
        for batch in Self.batches(machine.tick(now: Self.at(0))) {
            _ = machine.batchEnded(Self.stored(batch), now: Self.at(0.1))
        }
        #expect(machine.tick(now: Self.at(29)).isEmpty, "not before the interval")
        let check = machine.tick(now: Self.at(30))
        #expect(Self.others(check) == ["checkStored [\"0@2 epoch 1\", \"1@2 epoch 1\", \"2@2 epoch 1\"]"])
        guard case .checkStored(let checks) = check.first else { return }
        #expect(machine.tick(now: Self.at(61)).isEmpty, "one check at a time")
        let found = machine.storedChecked(
            checks,
            owners: [
                Self.p0: PartitionClaim(epoch: 1, storedThroughOffset: 1),  // restored behind
                Self.p1: PartitionClaim(epoch: 0, storedThroughOffset: 2),  // its epoch went back
                Self.p2: PartitionClaim(epoch: 1, storedThroughOffset: 2),
            ],
            now: Self.at(62)
        )
        #expect(Self.others(found) == ["withdrawOutputs [0]", "withdrawOutputs [1]"])
        let claims = machine.tick(now: Self.at(62))
        #expect(
            Self.others(claims) == ["claim [0]", "checkStored [\"2@2 epoch 1\"]", "pause [1]"],
            "behind: at once; another epoch: after a backoff; the next check, of what is still held"
        )
        // A failed read changes nothing.
        #expect(machine.storedChecked(checks, owners: nil, now: Self.at(63)).isEmpty)
    }

    @Test(
        "Random interleavings of polls, claims, batches' verifications and writes (failed and fenced ones too, several ending together, stale outcomes), commits running across them (refused ones too), revocations, losses and database restores: in order, no gap, one commit at a time, none past what is stored"
    )
    func randomInterleavings() throws {
        var generator = SeededGenerator(seed: 0xBA7C4)
        let partitions = [Self.p0, Self.p1, Self.p2]
        // How often the restores were found: by a claim (a rewind) and by a batch's fence.
        var rewinds = 0
        var batchesBehind = 0
        for round in 0..<300 {
            let concurrency = Int.random(in: 1...2, using: &generator)
            var machine = Self.machine(
                batchSize: Int.random(in: 1...4, using: &generator),
                concurrency: concurrency,
                initialBackoff: .milliseconds(100),
                maximumBackoff: .milliseconds(400),
                storedCheckInterval: .seconds(1)
            )
            var simulated = Dictionary(uniqueKeysWithValues: partitions.map { ($0, SimulatedPartition()) })
            var clock = 0.0
            var failures = true
            /// The commit running, ended by ``finishCommit()``.
            var commitRunning: [KafkaTopicPartitionOffset]?

            /// The simulated database's rows of `partitions` in `partition_owners` (one member: epochs stay 1).
            func ownerRows(_ partitions: [KafkaTopicPartition]) -> [KafkaTopicPartition: PartitionClaim] {
                Dictionary(
                    uniqueKeysWithValues: partitions.map { partition in
                        (partition, PartitionClaim(epoch: 1, storedThroughOffset: simulated[partition]!.storedThrough))
                    }
                )
            }

            func perform(_ actions: [Action]) {
                var pending = actions[...]
                while let action = pending.popFirst() {
                    switch action {
                    case .startBatch(let batch):
                        var state = simulated[batch.partition]!
                        #expect(state.owned, "round \(round): a batch of a partition not owned")
                        #expect(state.batchInFlight == nil, "round \(round): two batches of \(batch.partition)")
                        #expect(
                            Self.offsets(batch)
                                == Array(state.nextBatch..<(state.nextBatch + Int64(batch.messages.count))),
                            "round \(round): \(batch.partition) batch \(Self.offsets(batch)), expected from \(state.nextBatch)"
                        )
                        state.batchInFlight = batch
                        state.writing = false
                        state.lastBatch = batch
                        simulated[batch.partition] = state
                    case .writeBatch(let batch, let notifications):
                        let state = simulated[batch.partition]!
                        #expect(
                            state.batchInFlight.map(Self.offsets) == Self.offsets(batch) && !state.writing,
                            "round \(round): \(batch.partition) written, not the batch being verified"
                        )
                        #expect(notifications.fences.map(\.nextOffset) == [batch.nextOffset.offset])
                        simulated[batch.partition]!.writing = true
                    case .commit(let offsets):
                        #expect(commitRunning == nil, "round \(round): two commits at once")
                        #expect(
                            Set(offsets.map(\.topicPartition)).count == offsets.count,
                            "round \(round): a partition twice in \(offsets)"
                        )
                        for offset in offsets {
                            let state = simulated[offset.topicPartition]!
                            #expect(
                                (0..<offset.offset).allSatisfy(state.written.contains),
                                "round \(round): committing \(offset) past what is stored"
                            )
                            #expect(
                                offset.offset >= min(state.committed, state.rewoundTo ?? .max),
                                "round \(round): \(offset) moves the group back further than a rewind"
                            )
                        }
                        // Ended at once half the time, else later (``finishCommit()``), other events in between.
                        commitRunning = offsets
                        if Bool.random(using: &generator) { pending += endCommit() }
                    case .pause(let paused):
                        for partition in paused {
                            #expect(simulated[partition]!.owned && !simulated[partition]!.paused)
                            simulated[partition]!.paused = true
                        }
                    case .resume(let resumed):
                        for partition in resumed {
                            #expect(simulated[partition]!.paused)
                            simulated[partition]!.paused = false
                        }
                    case .assignOutputs(let assigned):
                        #expect(assigned.allSatisfy { simulated[$0]!.owned })
                    case .publishWritten(_, let partition):
                        #expect(
                            !simulated[partition]!.revoking,
                            "round \(round): \(partition) published while given up"
                        )
                    case .publishFromTable(let marked):
                        #expect(
                            !marked.contains { simulated[$0]!.revoking },
                            "round \(round): published while given up"
                        )
                    case .claim(let requests):
                        // The claim ends at once; while failures are on, one in four fails (tried again later).
                        let fails = failures && Int.random(in: 0..<4, using: &generator) == 0
                        let claims = fails ? nil : ownerRows(requests.map(\.partition))
                        pending += machine.claimEnded(requests, claims: claims, now: Self.at(clock))
                    case .rewind(let offset, _):
                        // The consumer seeks back to what the database holds.
                        let partition = offset.topicPartition
                        #expect(
                            offset.offset == simulated[partition]!.storedThrough,
                            "round \(round): \(partition) rewound to \(offset.offset), not what the database holds"
                        )
                        simulated[partition]!.position = offset.offset
                        simulated[partition]!.nextBatch = offset.offset
                        simulated[partition]!.rewoundTo = offset.offset
                        rewinds += 1
                    case .checkStored(let checks):
                        // The read ends at once; while failures are on, one in four fails.
                        let fails = failures && Int.random(in: 0..<4, using: &generator) == 0
                        let owners = fails ? nil : ownerRows(checks.map(\.partition))
                        pending += machine.storedChecked(checks, owners: owners, now: Self.at(clock))
                    case .withdrawOutputs(let withdrawn):
                        for partition in withdrawn {
                            #expect(simulated[partition]!.batchInFlight == nil, "round \(round): withdrawn in flight")
                        }
                    case .handOver(let handedOver):
                        for partition in handedOver {
                            #expect(simulated[partition]!.batchInFlight == nil, "round \(round): handed over in flight")
                            #expect(
                                commitRunning?.contains { $0.topicPartition == partition } != true,
                                "round \(round): \(partition) handed over while a commit of it runs"
                            )
                            simulated[partition]!.owned = false
                            simulated[partition]!.paused = false
                            simulated[partition]!.revoking = false
                        }
                    }
                }
            }

            /// The running commit ends, held or (while failures are on, half the time) refused; what the machine does
            /// next, to perform.
            func endCommit() -> [Action] {
                guard let offsets = commitRunning else { return [] }
                commitRunning = nil
                let committed = !failures || Bool.random(using: &generator)
                if committed {
                    for offset in offsets { simulated[offset.topicPartition]!.committed = offset.offset }
                }
                return machine.commitEnded(offsets, committed: committed, now: Self.at(clock))
            }

            func finishCommit() {
                perform(endCommit())
            }

            /// The batches in flight of `partitions` end together.
            func finishBatches(_ partitions: [KafkaTopicPartition]) {
                let outcomes = partitions.compactMap(outcome(of:))
                guard !outcomes.isEmpty else { return }
                perform(machine.batchesEnded(outcomes, now: Self.at(clock)))
            }

            func finishBatch(_ partition: KafkaTopicPartition) {
                finishBatches([partition])
            }

            /// How the task of the batch in flight of `partition` ends, if there is one: its verification, or its write.
            func outcome(of partition: KafkaTopicPartition) -> BatchOutcome? {
                guard let batch = simulated[partition]!.batchInFlight else { return nil }
                guard simulated[partition]!.writing else {
                    // Verified: its write is next, in flight still.
                    guard failures, Int.random(in: 0..<8, using: &generator) == 0 else { return Self.verified(batch) }
                    simulated[partition]!.batchInFlight = nil
                    return Self.failed(batch)
                }
                simulated[partition]!.batchInFlight = nil
                simulated[partition]!.writing = false
                let outcome: BatchOutcome
                if let expected = batch.storedThroughOffset, simulated[partition]!.storedThrough < expected {
                    // The fence: the database was restored behind what the member stored.
                    outcome = Self.behind(batch)
                    batchesBehind += 1
                } else if failures, Int.random(in: 0..<4, using: &generator) == 0 {
                    outcome = Self.failed(batch)
                } else if failures, Int.random(in: 0..<8, using: &generator) == 0 {
                    // Another member claimed the partition meanwhile: nothing stored.
                    outcome = Self.fenced(batch)
                } else {
                    simulated[partition]!.stored.formUnion(Self.offsets(batch))
                    simulated[partition]!.written.formUnion(Self.offsets(batch))
                    simulated[partition]!.storedThrough = max(
                        simulated[partition]!.storedThrough,
                        batch.nextOffset.offset
                    )
                    simulated[partition]!.nextBatch = batch.nextOffset.offset
                    outcome = Self.stored(batch)
                }
                return outcome
            }

            func assign(_ partition: KafkaTopicPartition) {
                // A new owner reads from the committed offset.
                simulated[partition]!.owned = true
                simulated[partition]!.position = simulated[partition]!.committed
                simulated[partition]!.nextBatch = simulated[partition]!.committed
                perform(
                    machine.assigned(
                        [partition],
                        committed: [partition: simulated[partition]!.committed],
                        now: Self.at(clock)
                    )
                )
            }

            func poll() {
                for partition in partitions {
                    let state = simulated[partition]!
                    guard state.owned, !state.paused, state.position < state.end else { continue }
                    let count = Int64.random(in: 1...(state.end - state.position), using: &generator)
                    let offsets = state.position...(state.position + count - 1)
                    machine.received(Self.messages(partition, offsets), now: Self.at(clock))
                    simulated[partition]!.position += count
                }
            }

            for partition in partitions { assign(partition) }
            for _ in 0..<80 {
                clock += Double.random(in: 0...0.2, using: &generator)
                let partition = partitions.randomElement(using: &generator)!
                switch Int.random(in: 0..<11, using: &generator) {
                case 10:
                    // The database restored to an earlier point: it holds the partition through less.
                    let restoredTo = Int64.random(in: 0...simulated[partition]!.storedThrough, using: &generator)
                    simulated[partition]!.storedThrough = restoredTo
                    simulated[partition]!.stored = simulated[partition]!.stored.filter { $0 < restoredTo }
                case 0...2:
                    simulated[partition]!.end += Int64.random(in: 1...5, using: &generator)
                case 3...4:
                    finishBatch(partition)
                case 5:
                    // Batches of several partitions end together (a shared transaction), and the commit running.
                    finishBatches(partitions.filter { _ in Bool.random(using: &generator) }.shuffled(using: &generator))
                    finishCommit()
                case 6:
                    // Revoked or lost, then (a later rebalance) owned again.
                    guard simulated[partition]!.owned else {
                        assign(partition)
                        break
                    }
                    let isLost = Bool.random(using: &generator)
                    simulated[partition]!.revoking = true
                    perform(machine.revoke([partition], isLost: isLost, now: Self.at(clock)))
                    // As the worker settles a revocation: its batches in flight, then the commit it waits for.
                    while true {
                        if let ending = machine.endingInFlight.first {
                            finishBatch(ending)
                        } else if machine.endingWaitsForCommit {
                            #expect(commitRunning != nil, "round \(round): waiting for a commit that does not run")
                            finishCommit()
                        } else {
                            break
                        }
                    }
                    #expect(!simulated[partition]!.owned, "round \(round): revoked \(partition) not handed over")
                    #expect(!machine.owned.contains(partition))
                default:
                    if !simulated[partition]!.owned { assign(partition) }
                }
                // An outcome no task of the partition gives now (none in flight, or its write runs) is ignored: a
                // write it started, or a change of the partition, fails the checks.
                if let last = simulated[partition]!.lastBatch, Int.random(in: 0..<4, using: &generator) == 0 {
                    if simulated[partition]!.batchInFlight == nil {
                        let stale = Bool.random(using: &generator) ? Self.verified(last) : Self.stored(last)
                        perform(machine.batchEnded(stale, now: Self.at(clock)))
                    } else if simulated[partition]!.writing {
                        perform(machine.batchEnded(Self.verified(last), now: Self.at(clock)))
                    }
                }
                poll()
                perform(machine.tick(now: Self.at(clock)))
                // A batch holds its verification slot until verified, an attempt after a failure until it ended.
                let holdingSlots = Set(
                    simulated.filter { _, state in
                        guard let batch = state.batchInFlight else { return false }
                        return !state.writing || batch.attempts > 0
                    }.keys
                )
                #expect(machine.verifying == holdingSlots, "round \(round): \(machine.verifying) being verified")
                #expect(machine.verifying.count <= concurrency, "round \(round): \(machine.verifying) being verified")
                #expect(
                    machine.inFlight == Set(simulated.filter { $0.value.batchInFlight != nil }.keys),
                    "round \(round): in flight \(machine.inFlight)"
                )
            }
            // Settle without failures: every message is stored and committed.
            failures = false
            for partition in partitions where !simulated[partition]!.owned { assign(partition) }
            for _ in 0..<200 {
                clock += 0.5
                finishBatches(partitions)
                finishCommit()
                poll()
                perform(machine.tick(now: Self.at(clock)))
            }
            while commitRunning != nil { finishCommit() }
            for partition in partitions {
                let state = simulated[partition]!
                #expect(state.stored == Set(0..<state.end), "round \(round): \(partition) not all stored")
                #expect(state.committed == state.end, "round \(round): \(partition) committed \(state.committed)")
                #expect(!state.paused)
            }
            #expect(machine.uncommitted.isEmpty)
        }
        #expect(rewinds > 0 && batchesBehind > 0, "restores found: \(rewinds) rewinds, \(batchesBehind) batches behind")
    }
}

extension [Worker.StateMachine.Action] {
    /// The offsets of the commit among these actions.
    fileprivate var commits: [KafkaTopicPartitionOffset] {
        flatMap { action -> [KafkaTopicPartitionOffset] in
            guard case .commit(let offsets) = action else { return [] }
            return offsets
        }
    }
}
