import AppStoreTestSupport
import Testing

@testable import KafkaClient

@Suite("Producer state machine", .tags(.fast))
struct ProducerStateMachineTests {
    typealias Machine = KafkaProducer.StateMachine<String, Int>

    @Test("Ids are unique and never zero; a report completes its delivery exactly once")
    func registerAndComplete() throws {
        var machine = Machine()
        guard case .enqueue(let first) = machine.register("a"), case .enqueue(let second) = machine.register("b") else {
            Issue.record("a running producer must take messages")
            return
        }
        #expect(first != 0 && second != 0 && first != second)
        #expect(machine.outstandingCount == 2)
        #expect(machine.complete(id: first) == "a")
        #expect(machine.complete(id: first) == nil)
        #expect(machine.outstandingCount == 1)
    }

    @Test("A full queue parks senders; each served report wakes one, and with nothing outstanding all retry")
    func roomWaiters() {
        var machine = Machine()
        guard case .enqueue(let first) = machine.register("a"), case .enqueue(let second) = machine.register("b"),
            case .enqueue(let third) = machine.register("c")
        else {
            Issue.record("a running producer must take messages")
            return
        }
        for waiter in 1...3 {
            guard case .wait = machine.waitForRoom(waiter) else {
                Issue.record("with messages outstanding a sender must wait for a report")
                return
            }
        }
        #expect(machine.roomWaits == 3)
        // Nobody is woken inside the report's callback; once the poll returned, one place freed wakes one waiter.
        _ = machine.complete(id: first)
        #expect(machine.takeWaitersToWake() == [1])
        #expect(machine.takeWaitersToWake() == [], "a freed place wakes only once")
        // A message librdkafka refused never took a place: it wakes nobody while others are outstanding.
        #expect(machine.refused(id: second) == "b")
        #expect(machine.takeWaitersToWake() == [])
        // Nothing outstanding after this report: no further report will come, so everyone retries now.
        _ = machine.complete(id: third)
        #expect(machine.takeWaitersToWake() == [2, 3])
        #expect(machine.roomWaiterCount == 0)
        guard case .retryNow(4) = machine.waitForRoom(4) else {
            Issue.record("with nothing outstanding a sender must retry at once, or it would wait forever")
            return
        }
    }

    @Test("While draining, new messages fail at once, waiters are released and the outstanding ones handed back")
    func drainingRefusesNewMessages() {
        var machine = Machine()
        _ = machine.register("in flight")
        _ = machine.waitForRoom(7)
        #expect(machine.beginDraining() == [7])
        guard case .fail(let refused) = machine.register("late") else {
            Issue.record("a draining producer must refuse new messages")
            return
        }
        #expect(refused == "late")
        guard case .retryNow(8) = machine.waitForRoom(8) else {
            Issue.record("a draining producer must not park senders")
            return
        }
        #expect(machine.finish() == ["in flight"])
        #expect(machine.phase == .finished)
        #expect(machine.outstandingCount == 0)
    }
}
