import AppStoreTestSupport
import KafkaClient
import NotificationStore
import Testing

@testable import Worker

@Suite(
    "The outbox drain's state machine: every partition's rows published, in order, one publication at a time",
    .tags(.fast)
)
struct OutboxDrainStateMachineTests {
    typealias Machine = OutboxDrain.StateMachine

    static let p0 = KafkaTopicPartition(topic: "raw", partition: 0)
    static let p1 = KafkaTopicPartition(topic: "raw", partition: 1)
    static let p2 = KafkaTopicPartition(topic: "raw", partition: 2)
    static let start = ContinuousClock.now

    static func machine(concurrency: Int = 4, maximumHeldRows: Int = 20_000) -> Machine {
        Machine(
            retryInterval: .seconds(1),
            sweepInterval: .seconds(5),
            maximumConcurrentPublications: concurrency,
            maximumHeldRows: maximumHeldRows,
            now: start
        )
    }

    /// A machine owning p0, whose first table read found nothing.
    static func owningP0() -> Machine {
        var machine = machine()
        machine.assign([p0], now: at(0))
        _ = machine.nextPublications(now: at(0))
        machine.finished(p0, .complete(throughID: nil), now: at(0))
        return machine
    }

    static func rows(_ ids: ClosedRange<Int64>) -> [OutboxMessage] {
        ids.map { OutboxMessage(id: $0, stream: .decoded, key: "k", payload: .missing) }
    }

    static func at(_ seconds: Double) -> ContinuousClock.Instant { start.advanced(by: .seconds(seconds)) }

    @Test("An assigned partition reads its table first; rows written meanwhile wait for the read, then follow it")
    func assignmentReadsTheTable() {
        var machine = Self.machine()
        machine.assign([Self.p0], now: Self.at(0))
        #expect(machine.nextPublications(now: Self.at(0)).map(\.1) == [.table])
        #expect(machine.nextPublications(now: Self.at(0)).isEmpty, "one publication per partition at a time")
        machine.written(Self.rows(10...12), for: Self.p0, now: Self.at(0.1))
        machine.finished(Self.p0, .complete(throughID: 10), now: Self.at(0.2))
        // 10 was in the read; 11 and 12 were committed after it.
        #expect(machine.nextPublications(now: Self.at(0.2)).map(\.1) == [.written(Self.rows(11...12))])
        machine.finished(Self.p0, .complete(throughID: 12), now: Self.at(0.3))
        #expect(machine.nextPublications(now: Self.at(0.3)).isEmpty)
        #expect(machine.pending.isEmpty)
    }

    @Test(
        "Rows a table read published between their batch's commit and its result reaching the drain are not published again; the table is read once more in case one was missed"
    )
    func sweepBeforeTheResult() {
        var machine = Self.owningP0()
        // The batch writing 3...5 committed; before its result arrives, a sweep reads the table, which holds them.
        machine.mayHaveRows([Self.p0], now: Self.at(5))
        #expect(machine.nextPublications(now: Self.at(5)).map(\.1) == [.table])
        machine.finished(Self.p0, .complete(throughID: 5), now: Self.at(5.1))
        machine.written(Self.rows(3...5), for: Self.p0, now: Self.at(5.2))
        #expect(machine.nextPublications(now: Self.at(5.2)).map(\.1) == [.table], "not .written(3...5) again")
        machine.finished(Self.p0, .complete(throughID: nil), now: Self.at(5.3))
        // Later batches' rows go out as written again.
        machine.written(Self.rows(6...7), for: Self.p0, now: Self.at(6))
        #expect(machine.nextPublications(now: Self.at(6)).map(\.1) == [.written(Self.rows(6...7))])
    }

    @Test("Written rows go out as written, in order, batch after batch, without reading the table")
    func writtenRows() {
        var machine = Self.owningP0()
        machine.written(Self.rows(1...2), for: Self.p0, now: Self.at(1))
        #expect(machine.nextPublications(now: Self.at(1)).map(\.1) == [.written(Self.rows(1...2))])
        machine.written(Self.rows(3...4), for: Self.p0, now: Self.at(1.1))
        machine.written(Self.rows(5...5), for: Self.p0, now: Self.at(1.2))
        #expect(machine.nextPublications(now: Self.at(1.2)).isEmpty)
        machine.finished(Self.p0, .complete(throughID: 2), now: Self.at(1.3))
        #expect(machine.nextPublications(now: Self.at(1.3)).map(\.1) == [.written(Self.rows(3...5))])
        machine.written(Self.rows(6...6), for: KafkaTopicPartition(topic: "raw", partition: 9), now: Self.at(1.4))
        #expect(machine.owned == [Self.p0], "rows of a partition not owned are not this member's to publish")
    }

    @Test("A failed publication: the table is read after the retry interval, not before; written rows wait in it")
    func failureRetriesFromTheTable() {
        var machine = Self.owningP0()
        machine.written(Self.rows(1...3), for: Self.p0, now: Self.at(1))
        _ = machine.nextPublications(now: Self.at(1))
        machine.written(Self.rows(4...4), for: Self.p0, now: Self.at(1.5))
        machine.finished(Self.p0, .incomplete, now: Self.at(2))
        #expect(machine.nextPublications(now: Self.at(2.5)).isEmpty)
        #expect(machine.nextDeadline(now: Self.at(2.5)) == Self.at(3))
        machine.written(Self.rows(5...5), for: Self.p0, now: Self.at(2.6))
        #expect(machine.nextPublications(now: Self.at(3)).map(\.1) == [.table])
        machine.finished(Self.p0, .complete(throughID: 5), now: Self.at(3.1))
        #expect(machine.pending.isEmpty, "1 to 5 were all in the table read")
    }

    @Test("A reason to read the table given while a read runs is not covered by that read")
    func markDuringARead() {
        var machine = Self.machine()
        machine.assign([Self.p0], now: Self.at(0))
        _ = machine.nextPublications(now: Self.at(0))
        machine.mayHaveRows([Self.p0], now: Self.at(0.1))
        machine.finished(Self.p0, .complete(throughID: 7), now: Self.at(0.2))
        #expect(machine.nextPublications(now: Self.at(0.2)).map(\.1) == [.table])
        machine.finished(Self.p0, .complete(throughID: nil), now: Self.at(0.3))
        #expect(machine.pending.isEmpty)
    }

    @Test("A mark while written rows are published: the table is read next, and the rows stay until it ends")
    func markDuringWrittenPublication() {
        var machine = Self.owningP0()
        machine.written(Self.rows(1...1), for: Self.p0, now: Self.at(1))
        _ = machine.nextPublications(now: Self.at(1))
        machine.mayHaveRows([Self.p0], now: Self.at(1.1))
        machine.written(Self.rows(2...2), for: Self.p0, now: Self.at(1.2))
        machine.finished(Self.p0, .complete(throughID: 1), now: Self.at(1.3))
        #expect(machine.nextPublications(now: Self.at(1.3)).map(\.1) == [.table])
        machine.finished(Self.p0, .complete(throughID: 1), now: Self.at(1.4))
        #expect(machine.nextPublications(now: Self.at(1.4)).map(\.1) == [.written(Self.rows(2...2))])
    }

    @Test("Rows written while publications hang are held up to a limit over all partitions; past it, the table")
    func heldRowsBounded() {
        var machine = Self.machine(concurrency: 1, maximumHeldRows: 5)
        machine.assign([Self.p0, Self.p1], now: Self.at(0))
        for (partition, at) in [(Self.p0, 0.0), (Self.p1, 0.1)] {
            _ = machine.nextPublications(now: Self.at(at))
            machine.finished(partition, .complete(throughID: nil), now: Self.at(at))
        }
        machine.written(Self.rows(1...2), for: Self.p0, now: Self.at(1))
        // p0's publication hangs (unresponsive brokers); the one place is taken, so p1 waits with its rows.
        #expect(machine.nextPublications(now: Self.at(1)).map(\.1) == [.written(Self.rows(1...2))])
        machine.written(Self.rows(3...4), for: Self.p1, now: Self.at(1.1))
        machine.written(Self.rows(5...6), for: Self.p0, now: Self.at(1.2))
        // 2 + 2 held: within the limit. Two more for p1 would make 6: p1 drops its own and reads the table.
        machine.written(Self.rows(7...8), for: Self.p1, now: Self.at(1.3))
        machine.finished(Self.p0, .complete(throughID: 2), now: Self.at(11))
        let next = machine.nextPublications(now: Self.at(11))
        #expect(next.map(\.0) == [Self.p1], "p1 waited longest")
        #expect(next.map(\.1) == [.table])
        machine.finished(Self.p1, .complete(throughID: 8), now: Self.at(11.1))
        #expect(machine.nextPublications(now: Self.at(11.1)).map(\.1) == [.written(Self.rows(5...6))])
    }

    @Test("Revoked: its running publication is reported, its outcome ignored; assigned again, the table comes first")
    func revocation() {
        var machine = Self.machine()
        machine.assign([Self.p0, Self.p1], now: Self.at(0))
        _ = machine.nextPublications(now: Self.at(0))
        #expect(machine.revoke([Self.p0]) == [Self.p0])
        machine.finished(Self.p0, .incomplete, now: Self.at(0.1))
        #expect(machine.owned == [Self.p1])
        #expect(machine.revoke([Self.p2]).isEmpty)
        machine.finished(Self.p1, .complete(throughID: nil), now: Self.at(0.2))
        #expect(machine.revoke([Self.p1]).isEmpty, "nothing running")
        machine.assign([Self.p0], now: Self.at(0.3))
        #expect(machine.nextPublications(now: Self.at(0.3)).map(\.1) == [.table])
    }

    @Test("At most the configured publications at once; the partition that waited longest goes first")
    func concurrencyAndFairness() {
        var machine = Self.machine(concurrency: 2)
        machine.assign([Self.p2], now: Self.at(0))
        machine.assign([Self.p0], now: Self.at(1))
        machine.assign([Self.p1], now: Self.at(2))
        let first = machine.nextPublications(now: Self.at(3))
        #expect(first.map(\.0) == [Self.p2, Self.p0])
        #expect(machine.nextPublications(now: Self.at(3)).isEmpty)
        machine.finished(Self.p0, .complete(throughID: nil), now: Self.at(4))
        #expect(machine.nextPublications(now: Self.at(4)).map(\.0) == [Self.p1])
        #expect(machine.publishing == [Self.p2, Self.p1])
    }

    @Test("A sweep is due every sweep interval, over the idle owned partitions, and over all of them now and then")
    func sweeps() {
        var machine = Self.machine()
        machine.assign([Self.p0, Self.p1], now: Self.at(0))
        #expect(machine.sweepIfDue(now: Self.at(4.9)) == nil)
        #expect(machine.sweepIfDue(now: Self.at(5)) == [], "both still have their first table read to make")
        #expect(machine.sweepIfDue(now: Self.at(6)) == nil)
        #expect(machine.nextDeadline(now: Self.at(9.5)) == Self.at(10), "the next sweep")
        #expect(machine.nextDeadline(now: Self.at(6)) == Self.at(7), "never later than a retry interval")
        for (partition, _) in machine.nextPublications(now: Self.at(6)) {
            machine.finished(partition, .complete(throughID: nil), now: Self.at(6))
        }
        machine.written(Self.rows(1...1), for: Self.p1, now: Self.at(6))
        #expect(machine.sweepIfDue(now: Self.at(10)) == [Self.p0], "p1 has rows of its own to publish")
        var full: Set<KafkaTopicPartition>?
        for sweep in 3...Machine.fullSweepEvery { full = machine.sweepIfDue(now: Self.at(Double(sweep) * 5)) }
        #expect(full == [Self.p0, Self.p1], "every so often, busy ones too")
    }

    @Test("Shutting down: one last attempt without waiting out the retry")
    func lastAttempt() {
        var machine = Self.machine()
        machine.assign([Self.p0], now: Self.at(0))
        _ = machine.nextPublications(now: Self.at(0))
        machine.finished(Self.p0, .incomplete, now: Self.at(0))
        #expect(machine.nextPublications(now: Self.at(0.5)).isEmpty)
        machine.skipRetryWaits()
        #expect(machine.nextPublications(now: Self.at(0.5)).map(\.1) == [.table])
    }

    /// A partition's outbox table as the simulation keeps it: committed rows not yet published.
    struct SimulatedPartition {
        var table: [Int64] = []
        var published: [Int64] = []
        /// The running publication, and for a table read whether it reads the table at its start or its end.
        var running: (publication: Machine.Publication, readsAtEnd: Bool, snapshot: [Int64])?
    }

    @Test("Random interleavings of writes, failed batches, sweeps, failures and revocations: nothing is left, in order")
    func randomInterleavings() {
        var generator = SeededGenerator(seed: 0x5EED)
        for _ in 0..<500 {
            // A small limit on held rows, so that dropping them for a table read is part of the interleavings.
            var machine = Self.machine(concurrency: 2, maximumHeldRows: 6)
            let partitions = [Self.p0, Self.p1, Self.p2]
            var simulated = Dictionary(uniqueKeysWithValues: partitions.map { ($0, SimulatedPartition()) })
            var nextID: Int64 = 1
            var clock = 0.0
            machine.assign(partitions, now: Self.at(clock))

            func finish(_ partition: KafkaTopicPartition, failing: Bool) {
                guard var state = simulated[partition], let running = state.running else { return }
                state.running = nil
                let candidates: [Int64]
                switch running.publication {
                case .written(let rows): candidates = rows.map(\.id)
                case .table: candidates = running.readsAtEnd ? state.table : running.snapshot
                }
                // A failure publishes a prefix (the rest stays in the table).
                let count = failing ? Int.random(in: 0..<max(1, candidates.count), using: &generator) : candidates.count
                let sent = Array(candidates.prefix(count))
                state.published += sent
                state.table.removeAll { sent.contains($0) }
                simulated[partition] = state
                let outcome: Machine.Outcome = failing ? .incomplete : .complete(throughID: candidates.last)
                machine.finished(partition, outcome, now: Self.at(clock))
            }

            for _ in 0..<60 {
                clock += Double.random(in: 0...0.6, using: &generator)
                let partition = partitions.randomElement(using: &generator)!
                switch Int.random(in: 0..<10, using: &generator) {
                case 0...3:
                    // A batch commits rows and hands them over (or its write could not return them).
                    let rows = Self.rows(nextID...(nextID + Int64.random(in: 0...2, using: &generator)))
                    nextID = rows.last!.id + 1
                    simulated[partition]!.table += rows.map(\.id)
                    if Bool.random(using: &generator) {
                        machine.written(rows, for: partition, now: Self.at(clock))
                    } else {
                        machine.mayHaveRows([partition], now: Self.at(clock))
                    }
                case 4:
                    // A batch failed after its COMMIT went through.
                    let rows = Self.rows(nextID...nextID)
                    nextID += 1
                    simulated[partition]!.table += rows.map(\.id)
                    machine.mayHaveRows([partition], now: Self.at(clock))
                case 5...7:
                    finish(partition, failing: Int.random(in: 0..<4, using: &generator) == 0)
                case 8:
                    // Handed over and back: the drain waits for the running publication, which ends unheard.
                    let running = machine.revoke([partition])
                    #expect(running == (simulated[partition]!.running == nil ? [] : [partition]))
                    finish(partition, failing: Bool.random(using: &generator))
                    machine.assign([partition], now: Self.at(clock))
                default:
                    if let owned = machine.sweepIfDue(now: Self.at(clock)) {
                        machine.mayHaveRows(owned.filter { !simulated[$0]!.table.isEmpty }, now: Self.at(clock))
                    }
                }
                for (started, publication) in machine.nextPublications(now: Self.at(clock)) {
                    #expect(simulated[started]!.running == nil, "one publication per partition at a time")
                    if case .written(let rows) = publication {
                        // Written rows go out only when nothing older waits in the table.
                        let ids = rows.map(\.id)
                        #expect(Array(simulated[started]!.table.prefix(ids.count)) == ids)
                    }
                    simulated[started]!.running = (
                        publication, Bool.random(using: &generator), simulated[started]!.table
                    )
                }
                #expect(machine.publishing.count <= 2)
            }
            // Settle: publications succeed; retries become due.
            for _ in 0..<50 {
                clock += 1.1
                for partition in partitions { finish(partition, failing: false) }
                for (started, publication) in machine.nextPublications(now: Self.at(clock)) {
                    simulated[started]!.running = (publication, true, simulated[started]!.table)
                }
            }
            for partition in partitions {
                let state = simulated[partition]!
                #expect(state.table.isEmpty, "\(partition): rows left unpublished: \(state.table)")
                #expect(state.published == state.published.sorted(), "\(partition): out of order: \(state.published)")
            }
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing interleaving can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
