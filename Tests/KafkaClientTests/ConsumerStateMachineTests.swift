import AppStoreTestSupport
import Testing

@testable import KafkaClient

@Suite("Consumer state machine: the two-step rebalance", .tags(.fast))
struct ConsumerStateMachineTests {
    typealias Machine = KafkaConsumer.StateMachine
    static let p0 = KafkaTopicPartition(topic: "raw", partition: 0)
    static let p1 = KafkaTopicPartition(topic: "raw", partition: 1)

    @Test("An assignment announced during a poll is applied after the batch")
    func assignment() {
        var machine = Machine()
        #expect(machine.startPoll() == .poll)
        #expect(machine.rebalanceAnnounced(.assign([Self.p0, Self.p1])) == .deferred)
        #expect(!machine.owns(Self.p0), "not before the batch ends")
        #expect(machine.takeAnnounced() == [.assign([Self.p0, Self.p1])])
        #expect(machine.assignment == [Self.p0, Self.p1])
    }

    @Test("A revocation is handed out first and carried out at the next poll; the partitions stay owned meanwhile")
    func revocation() {
        var machine = Machine()
        _ = machine.rebalanceAnnounced(.assign([Self.p0, Self.p1]))
        _ = machine.takeAnnounced()
        machine.paused([Self.p1])

        #expect(machine.rebalanceAnnounced(.revoke([Self.p1], isLost: false)) == .deferred)
        #expect(machine.takeAnnounced() == [.revoke([Self.p1], isLost: false)])
        #expect(machine.owns(Self.p1), "still owned while the application finishes its work")
        // The paused one is named, so its pause is cleared once unassigned.
        #expect(machine.startPoll() == .completeRevocation([Self.p1], paused: [Self.p1]))
        #expect(machine.owns(Self.p1), "until librdkafka accepted the unassignment")
        #expect(machine.startPoll() == .completeRevocation([Self.p1], paused: [Self.p1]), "a failed one is retried")
        machine.revocationCompleted()
        #expect(!machine.owns(Self.p1))
        #expect(machine.paused.isEmpty, "a revoked partition is no longer paused")
        #expect(machine.startPoll() == .poll)
    }

    @Test("An assignment librdkafka refused is not owned, and the next poll fails")
    func assignFailure() {
        var machine = Machine()
        _ = machine.rebalanceAnnounced(.assign([Self.p0]))
        _ = machine.takeAnnounced()
        let failure = KafkaError(code: .fatal, reason: "refused")
        machine.assignFailed(failure, partitions: [Self.p0])
        #expect(!machine.owns(Self.p0))
        #expect(machine.startPoll() == .fail(failure))
        #expect(machine.startPoll() == .poll, "raised once")
    }

    @Test("While closing, rebalances are applied inside the callback; a closed consumer does not poll")
    func closing() {
        var machine = Machine()
        _ = machine.rebalanceAnnounced(.assign([Self.p0]))
        _ = machine.takeAnnounced()
        _ = machine.rebalanceAnnounced(.revoke([Self.p0], isLost: false))
        _ = machine.takeAnnounced()

        #expect(machine.takeHandedOut() == [Self.p0], "close carries out the handed-out revocation")
        machine.beginClosing()
        #expect(machine.rebalanceAnnounced(.revoke([Self.p0], isLost: false)) == .applyNow)
        #expect(machine.startPoll() == .closed)
        machine.closed()
        #expect(machine.phase == .closed)
        #expect(machine.assignment.isEmpty)
    }
}
