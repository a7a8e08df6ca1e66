import KafkaClient
import Synchronization

/// A consumer-group member as the worker will be: it polls, records what it received, and commits after each batch.
final class GroupMember: Sendable {
    struct Delivery: Hashable, Sendable {
        var partition: KafkaTopicPartition
        var offset: Int64
        var member: String
    }

    let name: String
    let consumer: KafkaConsumer
    private let log = Mutex<
        (
            deliveries: [Delivery], events: [KafkaConsumerEvent], committed: [KafkaTopicPartition: Int64],
            groupHistory: [String]
        )
    >(
        ([], [], [:], [])
    )
    private let created = ContinuousClock.now

    init(name: String, consumer: KafkaConsumer) {
        self.name = name
        self.consumer = consumer
    }

    var deliveries: [Delivery] { log.withLock { $0.deliveries } }
    var events: [KafkaConsumerEvent] { log.withLock { $0.events } }
    var committed: [KafkaTopicPartition: Int64] { log.withLock { $0.committed } }

    /// One poll: records the events; commits what it received when `commit` is set.
    @discardableResult
    func pollOnce(commit: Bool = true) async throws -> [KafkaConsumerEvent] {
        let events = try await consumer.poll(maxMessages: 300, maxWait: .milliseconds(50))
        let messages = events.messages
        log.withLock {
            $0.events += events
            $0.groupHistory += events.compactMap { Self.groupChange($0, at: ContinuousClock.now - created) }
            $0.deliveries += messages.map { Delivery(partition: $0.topicPartition, offset: $0.offset, member: name) }
        }
        if commit, !messages.isEmpty {
            let next = messages.nextOffsets
            do {
                try await consumer.commit(next)
                log.withLock { log in
                    for entry in next {
                        log.committed[entry.topicPartition] = max(
                            log.committed[entry.topicPartition] ?? 0,
                            entry.offset
                        )
                    }
                }
            } catch {
                // The group moved on while the commit was under way (the worker's case too): the messages stay
                // uncommitted and are delivered again to whoever owns the partition next.
                guard error.code == .rebalanced else { throw error }
            }
        }
        return events
    }

    /// The member's assignment now and every assignment and revocation it was given, with when: for the message
    /// of a failed expectation about the group (a test that waits for the group to settle cannot say more).
    var groupReport: String {
        let history = log.withLock { $0.groupHistory }
        let partitions = consumer.assignment.map(\.partition).sorted()
        return "\(name) owns \(partitions); history: " + (history.isEmpty ? "none" : history.joined(separator: ", "))
    }

    private static func groupChange(_ event: KafkaConsumerEvent, at elapsed: Duration) -> String? {
        let time = "\((elapsed.seconds * 10).rounded() / 10) s"
        switch event {
        case .partitionsAssigned(let partitions):
            return "\(time) assigned \(partitions.map(\.partition).sorted())"
        case .partitionsRevoked(let revocation):
            return "\(time) revoked \(revocation.partitions.map(\.partition).sorted())"
                + (revocation.isLost ? " as lost" : "")
        case .messages, .offsetGap:
            return nil
        }
    }

    /// Polls until the task is cancelled, committing after each batch when `commit` is set.
    func pollUntilCancelled(commit: Bool = true) async throws {
        while !Task.isCancelled {
            try await pollOnce(commit: commit)
        }
    }
}

/// A flag tasks can share.
final class Flag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }

    func set() {
        value.withLock { $0 = true }
    }
}
