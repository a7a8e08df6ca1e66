import AppStoreSigning
import AppStoreTestSupport
import PostgresRuntime
import Testing

@Suite(
    "The PostgreSQL runtime's state machine: every caller answered once, abandoned work stopped, no connection left open",
    .tags(.fast)
)
struct PostgresRuntimeStateMachineTests {
    /// Connections, works and callers are plain names here.
    typealias Machine = PostgresRuntime.StateMachine<String, String, String>

    static let start = ContinuousClock.now

    static func at(_ seconds: Int) -> ContinuousClock.Instant { start.advanced(by: .seconds(seconds)) }

    /// Requests an operation, its caller waits, its work and timer start: the usual beginning.
    static func started(_ machine: inout Machine, _ name: String = "op") -> Machine.OperationID {
        guard case .start(let id) = machine.operationRequested(name) else {
            Issue.record("\(name) refused")
            return 0
        }
        #expect(machine.callerWaiting(id, caller: "caller \(id)") == nil)
        #expect(machine.workStarted(id, work: "work \(id)", timer: "timer \(id)") == nil)
        return id
    }

    @Test("An operation that ends in time answers its caller once, cancels its timer, and leaves nothing held")
    func endsInTime() {
        var machine = Machine()
        let id = Self.started(&machine, "writing")
        #expect(machine.connectionLeased(id, connection: "c1", connectionID: "1", now: Self.at(0)) == nil)
        #expect(machine.leases(now: Self.at(3)) == "1: leased for writing 3 s ago")
        machine.connectionReturned(id)
        let end = machine.workEnded(id)
        #expect(end.answersCaller && end.timer == "timer \(id)")
        #expect(machine.operationsRunning == 0 && machine.leases(now: Self.at(4)) == "none")
        #expect(machine.abandon(id, because: .deadline) == nil, "a deadline after the end does nothing")
    }

    @Test("At the deadline the caller is failed, the work cancelled, its connection closed; its end answers nobody")
    func deadline() {
        var machine = Machine()
        let id = Self.started(&machine)
        _ = machine.connectionLeased(id, connection: "c1", connectionID: "1", now: Self.at(0))
        let stop = machine.abandon(id, because: .deadline)
        #expect(stop?.caller == "caller \(id)" && stop?.work == "work \(id)" && stop?.connection == "c1")
        #expect(stop?.timer == nil, "the timer fired")
        #expect(machine.abandon(id, because: .cancelled) == nil, "answered once")
        #expect(
            machine.leases(now: Self.at(2)) == "1: leased for op (past its deadline) 2 s ago",
            "closing, still named"
        )
        #expect(machine.operationsRunning == 1, "the work still runs until it ends")
        #expect(machine.workEnded(id).answersCaller == false)
        #expect(machine.operationsRunning == 0)
    }

    @Test("A connection leased after the caller had its answer is closed at once")
    func leaseAfterDeadline() {
        var machine = Machine()
        let id = Self.started(&machine)
        #expect(machine.abandon(id, because: .deadline)?.connection == nil)
        #expect(machine.connectionLeased(id, connection: "c2", connectionID: "2", now: Self.at(1)) == "c2")
        #expect(machine.leases(now: Self.at(2)) == "none")
    }

    @Test("Cancelled before its caller waits: the caller is failed as it comes, the work stopped as it starts")
    func cancelledEarly() {
        var machine = Machine()
        guard case .start(let id) = machine.operationRequested("op") else {
            Issue.record("refused")
            return
        }
        #expect(machine.abandon(id, because: .cancelled)?.caller == nil)
        #expect(machine.callerWaiting(id, caller: "caller")?.caller == "caller")
        let stop = machine.workStarted(id, work: "work", timer: "timer")
        #expect(stop?.work == "work" && stop?.timer == "timer")
        #expect(machine.workEnded(id).answersCaller == false)
    }

    @Test("A work that ended before it was recorded is not recorded: its timer is cancelled, nothing stays")
    func endedBeforeRecorded() {
        var machine = Machine()
        guard case .start(let id) = machine.operationRequested("op") else {
            Issue.record("refused")
            return
        }
        #expect(machine.callerWaiting(id, caller: "caller") == nil)
        #expect(machine.workEnded(id).answersCaller)
        #expect(machine.workStarted(id, work: "work", timer: "timer")?.timer == "timer")
        #expect(machine.operationsRunning == 0)
        #expect(machine.shutdownRequested().isEmpty)
    }

    @Test("Shutdown waits for the works running, answered or not; operations start while it drains, none after")
    func shutdown() {
        var machine = Machine()
        let first = Self.started(&machine)
        let second = Self.started(&machine)
        _ = machine.abandon(second, because: .deadline)
        #expect(Set(machine.shutdownRequested()) == ["work \(first)", "work \(second)"])
        #expect(machine.lifecycle == .draining)
        #expect(machine.shutdownRequested().isEmpty, "once")
        guard case .start = machine.operationRequested("late") else {
            Issue.record("refused while draining")
            return
        }
        machine.drainEnded()
        #expect(machine.lifecycle == .closed)
        #expect(machine.operationRequested("after") == .refuse)
    }

    /// The runtime around the machine, as the simulation plays it.
    struct Simulation {
        enum Phase: Equatable { case requested, waiting, working, ended }

        struct Operation {
            var phase = Phase.requested
            var answers = 0
            var workKnown = false
            var workStopped = 0
            /// The connection the work holds (leased, not returned yet).
            var holding: String?
            var holdingClosed = false
            /// Answered before its work ended (a deadline, a cancellation).
            var abandoned = false
        }

        var machine = Machine()
        var operations: [Machine.OperationID: Operation] = [:]
        var connections = 0
        var drained: Set<String>?
        var closed = false

        mutating func perform(_ stop: Machine.Stop?, for id: Machine.OperationID) {
            guard let stop else { return }
            if let caller = stop.caller {
                #expect(caller == "caller \(id)")
                operations[id]!.answers += 1
            }
            if stop.work != nil { operations[id]!.workStopped += 1 }
            if let connection = stop.connection {
                #expect(connection == operations[id]!.holding)
                operations[id]!.holdingClosed = true
            }
        }

        mutating func abandon(_ id: Machine.OperationID, because reason: Machine.Abandonment) {
            let stop = machine.abandon(id, because: reason)
            if stop != nil { operations[id]!.abandoned = true }
            perform(stop, for: id)
            if operations[id]!.abandoned, operations[id]!.holding != nil {
                #expect(operations[id]!.holdingClosed, "operation \(id) abandoned with its connection open")
            }
        }

        mutating func request() {
            switch machine.operationRequested("op") {
            case .start(let id):
                #expect(!closed, "an operation started after the pool closed")
                operations[id] = Operation()
            case .refuse:
                #expect(closed, "an operation refused while the pool is open")
            }
        }

        mutating func step(_ id: Machine.OperationID, using generator: inout some RandomNumberGenerator) {
            let operation = operations[id]!
            switch operation.phase {
            case .requested:
                perform(machine.callerWaiting(id, caller: "caller \(id)"), for: id)
                operations[id]!.phase = .waiting
            case .waiting:
                let stop = machine.workStarted(id, work: "work \(id)", timer: "timer \(id)")
                operations[id]!.workKnown = stop == nil
                perform(stop, for: id)
                operations[id]!.phase = .working
            case .working:
                switch Int.random(in: 0..<4, using: &generator) {
                case 0 where operation.holding == nil:
                    connections += 1
                    let connection = "c\(connections)"
                    operations[id]!.holding = connection
                    operations[id]!.holdingClosed = false
                    let close = machine.connectionLeased(
                        id,
                        connection: connection,
                        connectionID: "\(connections)",
                        now: .now
                    )
                    #expect(
                        (close == connection) == operation.abandoned,
                        "a connection leased for operation \(id) (abandoned: \(operation.abandoned)) closed: \(close != nil)"
                    )
                    operations[id]!.holdingClosed = close != nil
                case 1 where operation.holding != nil:
                    machine.connectionReturned(id)
                    operations[id]!.holding = nil
                default:
                    machine.connectionReturned(id)
                    operations[id]!.holding = nil
                    if machine.workEnded(id).answersCaller { operations[id]!.answers += 1 }
                    operations[id]!.phase = .ended
                }
            case .ended:
                break
            }
        }

        /// Checks what must hold at every moment.
        func check() {
            for (id, operation) in operations {
                #expect(operation.answers <= 1, "operation \(id) answered \(operation.answers) times")
                #expect(operation.workStopped <= 1, "operation \(id)'s work stopped \(operation.workStopped) times")
            }
            let running = operations.values.filter { $0.phase != .ended }.count
            #expect(machine.operationsRunning == running)
        }
    }

    @Test(
        "Random interleavings of operations, leases, ends, deadlines, cancellations and a shutdown: each caller answered exactly once, every abandoned operation's connection closed, no operation after the pool closed",
        arguments: [UInt64(0x9E01), 0x9E02, 0x9E03, 0x9E04]
    )
    func randomInterleavings(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<200 {
            var simulation = Simulation()
            let shutdownAt = Bool.random(using: &generator) ? Int.random(in: 10..<100, using: &generator) : nil
            for step in 0..<120 {
                if step == shutdownAt {
                    let works = simulation.machine.shutdownRequested()
                    let expected = simulation.operations.filter { $0.value.workKnown && $0.value.phase != .ended }
                    #expect(Set(works) == Set(expected.keys.map { "work \($0)" }))
                }
                if let shutdownAt, step == shutdownAt + 10 {
                    simulation.machine.drainEnded()
                    simulation.closed = true
                }
                let live = simulation.operations.filter { $0.value.phase != .ended }.keys.sorted()
                switch Int.random(in: 0..<10, using: &generator) {
                case 0...2:
                    simulation.request()
                case 3:
                    if let id = live.randomElement(using: &generator) { simulation.abandon(id, because: .deadline) }
                case 4:
                    if let id = live.randomElement(using: &generator) { simulation.abandon(id, because: .cancelled) }
                default:
                    if let id = live.randomElement(using: &generator) {
                        simulation.step(id, using: &generator)
                    }
                }
                simulation.check()
            }
            // Settle: every operation runs to its end.
            for id in simulation.operations.keys.sorted() {
                while simulation.operations[id]!.phase != .ended {
                    simulation.step(id, using: &generator)
                }
            }
            simulation.check()
            #expect(simulation.machine.operationsRunning == 0)
            #expect(simulation.machine.leases(now: .now) == "none")
            for (id, operation) in simulation.operations {
                #expect(operation.answers == 1, "operation \(id) answered \(operation.answers) times")
            }
        }
    }
}
