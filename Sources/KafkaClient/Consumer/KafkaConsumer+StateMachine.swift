extension KafkaConsumer {
    /// The consumer's view of its group membership: what it owns, what it paused, rebalances librdkafka announced
    /// and the revocation the application is finishing. Pure; the consumer does the librdkafka calls its actions ask
    /// for.
    ///
    /// Rebalances are handled in two steps so the application learns of a revocation before it happens: the
    /// rebalance callback (inside a batch poll) only records what librdkafka announced; after the batch, an
    /// assignment is applied at once and reported, while a revocation is reported and applied only at the next
    /// poll (or at close), once the application had the chance to finish the partitions' work. librdkafka holds
    /// the group's rebalance until then. Deferring the (un)assign calls out of the callback also keeps them
    /// sequential with the batch calls, which librdkafka 2.0.2 needs (its batch consume may lose messages when
    /// pause, resume or (un)assign run during a batch).
    struct StateMachine {
        enum Phase: Equatable {
            case running
            /// `close()` (or the handle's destruction) is under way: rebalances are applied inside the callback,
            /// since nobody polls any more.
            case closing
            case closed
        }

        /// A rebalance librdkafka announced through the callback.
        enum Rebalance: Equatable {
            case assign([KafkaTopicPartition])
            case revoke([KafkaTopicPartition], isLost: Bool)
        }

        private(set) var phase = Phase.running
        private(set) var assignment: Set<KafkaTopicPartition> = []
        private(set) var paused: Set<KafkaTopicPartition> = []
        /// Announced during the current poll, not yet acted on.
        private var announced: [Rebalance] = []
        /// Reported to the application; applied at its next poll.
        private var handedOut: [KafkaTopicPartition]?

        enum CallbackAction: Equatable {
            /// Apply it now, inside the callback (closing).
            case applyNow
            /// Recorded; handled after the batch.
            case deferred
        }

        mutating func rebalanceAnnounced(_ rebalance: Rebalance) -> CallbackAction {
            guard phase == .running else {
                if case .assign(let partitions) = rebalance { assignment.formUnion(partitions) }
                if case .revoke(let partitions, _) = rebalance { removeFromAssignment(partitions) }
                return .applyNow
            }
            announced.append(rebalance)
            return .deferred
        }

        enum PollStart: Equatable {
            /// Unassign the revocation the application was handed, then poll.
            case completeRevocation([KafkaTopicPartition])
            case poll
            /// Closed: nothing to poll.
            case closed
        }

        mutating func startPoll() -> PollStart {
            guard phase == .running else { return .closed }
            return takeHandedOut().map(PollStart.completeRevocation) ?? .poll
        }

        /// The revocation handed to the application, now to be applied (by the next poll or by close).
        mutating func takeHandedOut() -> [KafkaTopicPartition]? {
            guard let partitions = handedOut else { return nil }
            handedOut = nil
            removeFromAssignment(partitions)
            return partitions
        }

        /// What the batch's callbacks announced, in order; assignments are now applied, revocations handed out.
        mutating func takeAnnounced() -> [Rebalance] {
            defer { announced.removeAll() }
            for rebalance in announced {
                switch rebalance {
                case .assign(let partitions):
                    assignment.formUnion(partitions)
                case .revoke(let partitions, _):
                    handedOut = (handedOut ?? []) + partitions
                }
            }
            return announced
        }

        /// Whether a message of this partition may reach the application (it is still owned).
        func owns(_ partition: KafkaTopicPartition) -> Bool {
            assignment.contains(partition)
        }

        mutating func paused(_ partitions: [KafkaTopicPartition]) {
            paused.formUnion(partitions)
        }

        mutating func resumed(_ partitions: [KafkaTopicPartition]) {
            paused.subtract(partitions)
        }

        mutating func beginClosing() {
            if phase == .running { phase = .closing }
        }

        mutating func closed() {
            phase = .closed
            assignment.removeAll()
            paused.removeAll()
            announced.removeAll()
            handedOut = nil
        }

        private mutating func removeFromAssignment(_ partitions: [KafkaTopicPartition]) {
            assignment.subtract(partitions)
            paused.subtract(partitions)
        }
    }
}
