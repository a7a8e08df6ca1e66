import AppStoreTestSupport
import Testing

@testable import Worker

@Suite(
    "The group commit's state machine: every batch answered once, by its transaction, lanes and interval kept",
    .tags(.fast)
)
struct GroupCommitWriterStateMachineTests {
    typealias Machine = GroupCommitWriter.StateMachine
    typealias Action = Machine.Action
    typealias Ticket = Machine.Ticket

    static let start = ContinuousClock.now

    /// `seconds` after the start, to the millisecond: an interval added to one instant gives exactly another.
    static func at(_ seconds: Double) -> ContinuousClock.Instant {
        start.advanced(by: .milliseconds(Int((seconds * 1_000).rounded())))
    }

    /// A machine whose lanes started at 0.
    static func machine(lanes: Int = 1, maximumMessages: Int = 100, interval: Duration = .milliseconds(200)) -> Machine
    {
        var machine = Machine(lanes: lanes, maximumMessages: maximumMessages, interval: interval)
        #expect(machine.start(now: at(0)).isEmpty)
        return machine
    }

    /// Hands in a batch; returns its ticket and the actions.
    static func submit(
        _ machine: inout Machine,
        messages: Int = 10,
        isBehind: Bool = false,
        at seconds: Double
    ) -> (Ticket, [Action]) {
        machine.submit(messages: messages, isBehind: isBehind, now: at(seconds))
    }

    @Test("Batches handed in before the lanes start wait, then go together in one transaction")
    func startTakesWaiting() {
        var machine = Machine(lanes: 2, maximumMessages: 100, interval: .milliseconds(200))
        let (first, none) = Self.submit(&machine, at: 0)
        let (second, _) = Self.submit(&machine, at: 0)
        #expect(none.isEmpty)
        #expect(machine.waitingBatches == 2)
        #expect(machine.pausingLanes == 0, "no lane runs yet")
        #expect(machine.start(now: Self.at(0.1)) == [.write(lane: 0, [first, second])])
        #expect(machine.start(now: Self.at(0.1)).isEmpty, "started once")
        #expect(machine.waitingBatches == 0)
        #expect(machine.writing == 1)
    }

    @Test(
        "A batch handed in while a lane is free and past its interval is written at once; one within the interval waits for a wake-up at its end, and the batches waiting then go together"
    )
    func interval() {
        var machine = Self.machine()
        let (first, actions) = Self.submit(&machine, at: 1)
        #expect(actions == [.write(lane: 0, [first])], "nothing written before: at once")
        #expect(machine.writeEnded(lane: 0, succeeded: true, now: Self.at(1.05)) == [.answer([first], .written)])
        let (second, waits) = Self.submit(&machine, at: 1.1)
        #expect(waits == [.wakeUp(at: Self.at(1.2))], "the interval runs from the last transaction's start")
        #expect(machine.pausingLanes == 1)
        let (third, joins) = Self.submit(&machine, at: 1.15)
        #expect(joins.isEmpty, "a wake-up already comes then")
        #expect(machine.wakeUp(now: Self.at(1.19)).isEmpty, "too early (a stale timer)")
        #expect(machine.wakeUp(now: Self.at(1.2)) == [.write(lane: 0, [second, third])])
        #expect(machine.pausingLanes == 0)
        #expect(
            machine.writeEnded(lane: 0, succeeded: true, now: Self.at(1.3)) == [.answer([second, third], .written)]
        )
        let (fourth, late) = Self.submit(&machine, at: 2)
        #expect(late == [.write(lane: 0, [fourth])], "the interval long over: at once")
    }

    @Test("With no interval a lane takes what waits as soon as its transaction ends")
    func noInterval() {
        var machine = Self.machine(interval: .zero)
        let (first, _) = Self.submit(&machine, at: 0)
        let (second, waits) = Self.submit(&machine, at: 0)
        #expect(waits.isEmpty, "the only lane is busy")
        #expect(
            machine.writeEnded(lane: 0, succeeded: true, now: Self.at(0)) == [
                .answer([first], .written), .write(lane: 0, [second]),
            ]
        )
    }

    @Test("A batch of a partition that is behind does not wait out the interval: its transaction takes every batch")
    func behind() {
        var machine = Self.machine()
        _ = Self.submit(&machine, at: 0)
        _ = machine.writeEnded(lane: 0, succeeded: true, now: Self.at(0.01))
        let (second, _) = Self.submit(&machine, at: 0.02)
        let (third, actions) = Self.submit(&machine, isBehind: true, at: 0.03)
        #expect(actions == [.write(lane: 0, [second, third])])
    }

    @Test(
        "A whole transaction's messages waiting do not wait out the interval; a transaction takes the oldest batch and those that fit beside it, in order; one batch larger than the limit goes alone"
    )
    func wholeTransaction() {
        var machine = Self.machine(maximumMessages: 100)
        _ = Self.submit(&machine, messages: 10, at: 0)
        _ = machine.writeEnded(lane: 0, succeeded: true, now: Self.at(0.01))
        let (a, _) = Self.submit(&machine, messages: 50, at: 0.02)
        let (b, _) = Self.submit(&machine, messages: 40, at: 0.03)
        let (c, actions) = Self.submit(&machine, messages: 20, at: 0.04)
        #expect(actions == [.write(lane: 0, [a, b])], "110 wait: 50 and 40 make the transaction, 20 do not fit")
        #expect(machine.waitingBatches == 1)
        let (huge, _) = Self.submit(&machine, messages: 500, at: 0.05)
        #expect(
            machine.writeEnded(lane: 0, succeeded: true, now: Self.at(0.06)) == [
                .answer([a, b], .written), .write(lane: 0, [c]),
            ],
            "520 wait: the oldest goes first, and the larger batch does not fit beside it"
        )
        #expect(
            machine.writeEnded(lane: 0, succeeded: true, now: Self.at(0.07)) == [
                .answer([c], .written), .write(lane: 0, [huge]),
            ]
        )
    }

    @Test("At most `lanes` transactions at once; each lane keeps its own interval")
    func lanes() {
        var machine = Self.machine(lanes: 2)
        let (first, one) = Self.submit(&machine, at: 0)
        let (second, two) = Self.submit(&machine, at: 0.01)
        let (third, three) = Self.submit(&machine, at: 0.02)
        #expect(one == [.write(lane: 0, [first])])
        #expect(two == [.write(lane: 1, [second])])
        #expect(three.isEmpty, "both lanes busy")
        #expect(machine.writing == 2)
        // Lane 0's interval ends at 0.2, lane 1's at 0.21.
        #expect(
            machine.writeEnded(lane: 1, succeeded: true, now: Self.at(0.1)) == [
                .answer([second], .written), .wakeUp(at: Self.at(0.21)),
            ]
        )
        #expect(
            machine.writeEnded(lane: 0, succeeded: true, now: Self.at(0.15)) == [
                .answer([first], .written), .wakeUp(at: Self.at(0.2)),
            ],
            "lane 0 may start sooner: a wake-up then"
        )
        #expect(machine.wakeUp(now: Self.at(0.2)) == [.write(lane: 0, [third])])
        #expect(machine.wakeUp(now: Self.at(0.21)).isEmpty, "nothing left for lane 1")
    }

    @Test("A failed transaction fails each of its batches; an end reported for a lane not writing changes nothing")
    func failure() {
        var machine = Self.machine(lanes: 2)
        let (first, _) = Self.submit(&machine, at: 0)
        #expect(machine.writeEnded(lane: 1, succeeded: true, now: Self.at(0.1)).isEmpty)
        #expect(machine.writeEnded(lane: 7, succeeded: true, now: Self.at(0.1)).isEmpty)
        #expect(machine.writeEnded(lane: 0, succeeded: false, now: Self.at(0.1)) == [.answer([first], .failed)])
        #expect(machine.writeEnded(lane: 0, succeeded: true, now: Self.at(0.1)).isEmpty, "answered once")
    }

    @Test(
        "Stopping answers the waiting batches as stopped and every batch handed in after; running transactions are answered as they end, and nothing more starts"
    )
    func stop() {
        var machine = Self.machine(lanes: 1)
        let (running, _) = Self.submit(&machine, at: 0)
        let (waiting, _) = Self.submit(&machine, isBehind: true, at: 0.01)
        #expect(machine.stop() == [.answer([waiting], .stopped)])
        #expect(machine.isStopped)
        #expect(machine.stop().isEmpty)
        let (late, actions) = Self.submit(&machine, isBehind: true, at: 0.02)
        #expect(actions == [.answer([late], .stopped)])
        #expect(machine.writeEnded(lane: 0, succeeded: true, now: Self.at(0.3)) == [.answer([running], .written)])
        #expect(machine.wakeUp(now: Self.at(1)).isEmpty)
        #expect(machine.start(now: Self.at(1)).isEmpty)
        #expect(machine.waitingBatches == 0 && machine.writing == 0 && machine.pausingLanes == 0)
    }

    @Test("Stopped before the lanes start: the waiting batches are answered, none is written")
    func stopBeforeStart() {
        var machine = Machine(lanes: 1, maximumMessages: 100, interval: .zero)
        let (ticket, _) = Self.submit(&machine, at: 0)
        #expect(machine.stop() == [.answer([ticket], .stopped)])
        #expect(machine.start(now: Self.at(0)).isEmpty)
    }

    // MARK: - Random interleavings

    /// The simulation's record of one batch handed in.
    struct SimulatedBatch {
        enum Place: Equatable {
            case waiting
            case writing(lane: Int)
            case answered(Machine.Answer)
        }

        var partition: Int
        var messages: Int
        var isBehind: Bool
        var place = Place.waiting
        var answers = 0
    }

    /// The writer around the machine as the simulation plays it: transactions that run until told to end, timers that
    /// fire when the clock reaches them, callers that hand in one batch per partition at a time.
    struct Simulation {
        var machine: Machine
        let lanes: Int
        let maximumMessages: Int
        let interval: Duration
        /// Time since the start.
        var clock = Duration.zero
        var batches: [Ticket: SimulatedBatch] = [:]
        /// Waiting tickets in the order handed in.
        var waiting: [Ticket] = []
        var writing: [Int: [Ticket]] = [:]
        var lastStart: [Int: ContinuousClock.Instant] = [:]
        var wakeUps: [ContinuousClock.Instant] = []
        var busyPartitions: Set<Int> = []
        /// Each partition's batches in the order they were written.
        var writtenOrder: [Int: [Ticket]] = [:]
        var running = false
        var stopped = false

        var now: ContinuousClock.Instant { GroupCommitWriterStateMachineTests.start.advanced(by: clock) }

        /// Whether the batches waiting would start a transaction without waiting out an interval.
        var startsNow: Bool {
            waiting.contains { batches[$0]!.isBehind }
                || waiting.reduce(0) { $0 + batches[$1]!.messages }
                    >= maximumMessages
        }

        /// Checks and records `actions`; `ended` is the transaction whose end they follow.
        mutating func record(_ actions: [Action], ended: (lane: Int, tickets: [Ticket], succeeded: Bool)? = nil) {
            for action in actions {
                switch action {
                case .write(let lane, let tickets):
                    #expect(running && !stopped, "a transaction only while running")
                    #expect(writing[lane] == nil, "lane \(lane) already writing")
                    #expect(writing.count < lanes, "more than \(lanes) transactions at once")
                    #expect(!tickets.isEmpty)
                    #expect(tickets.first == waiting.first, "the oldest waiting batch goes first")
                    for ticket in tickets {
                        #expect(batches[ticket]?.place == .waiting, "\(ticket) written twice, or after its answer")
                    }
                    let messages = tickets.reduce(0) { $0 + batches[$1]!.messages }
                    #expect(tickets.count == 1 || messages <= maximumMessages, "a transaction over the limit")
                    #expect(Set(tickets.map { batches[$0]!.partition }).count == tickets.count)
                    if let last = lastStart[lane], now < last.advanced(by: interval) {
                        #expect(startsNow, "lane \(lane) started within its interval with nothing behind")
                    }
                    lastStart[lane] = now
                    writing[lane] = tickets
                    waiting.removeAll { tickets.contains($0) }
                    for ticket in tickets {
                        batches[ticket]!.place = .writing(lane: lane)
                        writtenOrder[batches[ticket]!.partition, default: []].append(ticket)
                    }
                case .answer(let tickets, let answer):
                    for ticket in tickets {
                        guard var batch = batches[ticket] else {
                            Issue.record("\(ticket) answered, never handed in")
                            continue
                        }
                        batch.answers += 1
                        #expect(batch.answers == 1, "\(ticket) answered twice")
                        switch answer {
                        case .written, .failed:
                            #expect(
                                ended.map { $0.tickets.contains(ticket) && $0.succeeded == (answer == .written) }
                                    == true,
                                "\(ticket) answered \(answer), not by its transaction's end"
                            )
                        case .stopped:
                            #expect(stopped && batch.place == .waiting, "\(ticket) stopped, written or still running")
                            waiting.removeAll { $0 == ticket }
                        }
                        batch.place = .answered(answer)
                        batches[ticket] = batch
                        busyPartitions.remove(batch.partition)
                    }
                case .wakeUp(let at):
                    #expect(at > now, "a wake-up for a time passed")
                    wakeUps.append(at)
                }
            }
            checkNothingIdles()
        }

        /// No lane is free to start while batches wait for it, and a lane waiting out its interval will be woken.
        func checkNothingIdles() {
            guard running, !stopped, !waiting.isEmpty, writing.count < lanes else { return }
            let free = (0..<lanes).filter { writing[$0] == nil }
            let notBefore = free.map { lastStart[$0].map { $0.advanced(by: interval) } ?? now }.min()!
            #expect(notBefore > now && !startsNow, "a free lane idles while \(waiting.count) batches wait")
            #expect(wakeUps.contains { $0 <= notBefore }, "no wake-up for the end of the interval")
        }

        mutating func start() {
            guard !running else { return }
            running = true
            record(machine.start(now: now))
        }

        mutating func submit(partition: Int, messages: Int, isBehind: Bool) {
            // The callers' promise: one batch of a partition in flight at a time.
            guard !busyPartitions.contains(partition) else { return }
            busyPartitions.insert(partition)
            let (ticket, actions) = machine.submit(messages: messages, isBehind: isBehind, now: now)
            #expect(batches[ticket] == nil, "a ticket given twice")
            batches[ticket] = SimulatedBatch(partition: partition, messages: messages, isBehind: isBehind)
            waiting.append(ticket)
            record(actions)
        }

        mutating func end(lane: Int, succeeded: Bool) {
            guard let tickets = writing.removeValue(forKey: lane) else { return }
            record(machine.writeEnded(lane: lane, succeeded: succeeded, now: now), ended: (lane, tickets, succeeded))
            for ticket in tickets {
                #expect(batches[ticket]!.answers == 1, "\(ticket) not answered at its transaction's end")
            }
        }

        /// Moves the clock on and fires the wake-ups due, as their timers would.
        mutating func advance(by duration: Duration) {
            clock += duration
            while let due = wakeUps.indices.filter({ wakeUps[$0] <= now }).first {
                wakeUps.remove(at: due)
                record(machine.wakeUp(now: now))
            }
        }

        mutating func stop() {
            stopped = true
            record(machine.stop())
            #expect(waiting.isEmpty, "batches left waiting after the stop")
        }
    }

    @Test(
        "Random interleavings of batches handed in, transactions ending or failing, timers and stops: each batch answered once, by its own transaction, lanes and intervals kept, nothing left idle",
        arguments: [(UInt64(0x6C01), 1, 0.2), (0x6C02, 2, 0.2), (0x6C03, 3, 0.05), (0x6C04, 2, 0.0)]
    )
    func randomInterleavings(seed: UInt64, lanes: Int, interval: Double) {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<200 {
            let maximumMessages = 50
            var simulation = Simulation(
                machine: Machine(lanes: lanes, maximumMessages: maximumMessages, interval: .seconds(interval)),
                lanes: lanes,
                maximumMessages: maximumMessages,
                interval: .seconds(interval)
            )
            let startsAt = Int.random(in: 0..<10, using: &generator)
            let stopsAt = Bool.random(using: &generator) ? Int.random(in: 20..<150, using: &generator) : nil
            for step in 0..<150 {
                if step == startsAt { simulation.start() }
                if step == stopsAt { simulation.stop() }
                switch Int.random(in: 0..<10, using: &generator) {
                case 0...3:
                    simulation.submit(
                        partition: Int.random(in: 0..<6, using: &generator),
                        // Now and then one batch larger than a whole transaction.
                        messages: Int.random(in: 0..<10, using: &generator) == 0
                            ? 80 : Int.random(in: 1...30, using: &generator),
                        isBehind: Int.random(in: 0..<5, using: &generator) == 0
                    )
                case 4...6:
                    if let lane = simulation.writing.keys.randomElement(using: &generator) {
                        simulation.end(lane: lane, succeeded: Int.random(in: 0..<4, using: &generator) != 0)
                    }
                case 7:
                    // A stale timer, or one late: the machine looks again and finds what is due.
                    simulation.record(simulation.machine.wakeUp(now: simulation.now))
                default:
                    simulation.advance(by: .seconds(Double.random(in: 0...(interval * 1.5 + 0.01), using: &generator)))
                }
                #expect(simulation.machine.writing == simulation.writing.count)
                #expect(simulation.machine.waitingBatches == simulation.waiting.count)
            }
            // Settle: the lanes run, every transaction succeeds, timers fire.
            simulation.start()
            for _ in 0..<1_000 where !simulation.waiting.isEmpty || !simulation.writing.isEmpty {
                for lane in simulation.writing.keys.sorted() { simulation.end(lane: lane, succeeded: true) }
                simulation.advance(by: simulation.wakeUps.min().map { simulation.now.duration(to: $0) } ?? .zero)
            }
            for (ticket, batch) in simulation.batches {
                #expect(batch.answers == 1, "\(ticket) answered \(batch.answers) times")
                if case .answered = batch.place {} else { Issue.record("\(ticket) left \(batch.place)") }
            }
            for (partition, tickets) in simulation.writtenOrder {
                #expect(tickets == tickets.sorted(), "partition \(partition) written out of order")
            }
        }
    }
}
