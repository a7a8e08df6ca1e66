extension KafkaConsumer {
    /// The consumer's view of its group membership: what it owns, what it paused, rebalances librdkafka announced
    /// and the revocation the application is finishing. Pure; the consumer does the librdkafka calls its actions ask
    /// for.
    ///
    /// Rebalances are handled in two steps so the application learns of a revocation before it happens: the
    /// rebalance callback (inside a poll) only records what librdkafka announced; after the poll, an assignment is
    /// applied at once and reported, while a revocation is reported and applied only at the next poll (or at close),
    /// once the application had the chance to finish the partitions' work. librdkafka holds the group's rebalance
    /// until then.
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
        /// Whether librdkafka ever announced an assignment (even an empty one): after it, librdkafka 2.0.2's
        /// cooperative-sticky assignor has its state and the handle can be destroyed safely.
        private(set) var everAssigned = false
        /// Rebalances librdkafka announced so far, served or not.
        private(set) var announcements = 0
        /// Announced during the current poll, not yet acted on.
        private var announced: [Rebalance] = []
        /// Reported to the application; applied at its next poll.
        private var handedOut: [KafkaTopicPartition]?
        /// A failure found after a poll had already taken messages: the messages were returned, the failure is
        /// raised by the next poll.
        private var deferredFailure: KafkaError?

        enum CallbackAction: Equatable {
            /// Apply it now, inside the callback (closing).
            case applyNow
            /// Recorded; handled after the poll.
            case deferred
        }

        mutating func rebalanceAnnounced(_ rebalance: Rebalance) -> CallbackAction {
            announcements += 1
            if case .assign = rebalance { everAssigned = true }
            guard phase == .running else {
                if case .assign(let partitions) = rebalance { assignment.formUnion(partitions) }
                if case .revoke(let partitions, _) = rebalance { removeFromAssignment(partitions) }
                return .applyNow
            }
            announced.append(rebalance)
            return .deferred
        }

        enum PollStart: Equatable {
            /// Unassign the revocation the application was handed (then resume those of its partitions that were
            /// paused, since librdkafka keeps an application's pause across an unassignment), then poll.
            case completeRevocation([KafkaTopicPartition], paused: [KafkaTopicPartition])
            case poll
            /// A failure after the last poll's messages: raise it now.
            case fail(KafkaError)
            /// Closed: nothing to poll.
            case closed
        }

        mutating func startPoll() -> PollStart {
            guard phase == .running else { return .closed }
            if let failure = deferredFailure {
                deferredFailure = nil
                return .fail(failure)
            }
            guard let partitions = handedOut else { return .poll }
            return .completeRevocation(partitions, paused: partitions.filter(paused.contains))
        }

        /// The handed-out revocation was carried out.
        mutating func revocationCompleted() {
            guard let partitions = handedOut else { return }
            handedOut = nil
            removeFromAssignment(partitions)
        }

        /// The revocation handed to the application, taken to be carried out by close or deinit.
        mutating func takeHandedOut() -> [KafkaTopicPartition]? {
            guard let partitions = handedOut else { return nil }
            handedOut = nil
            removeFromAssignment(partitions)
            return partitions
        }

        /// What the poll's callbacks announced, in order; assignments count as applied, revocations as handed out.
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

        /// An assignment could not be applied: the consumer's view and librdkafka's differ, so the next poll fails.
        mutating func assignFailed(_ failure: KafkaError, partitions: [KafkaTopicPartition]) {
            assignment.subtract(partitions)
            deferredFailure = deferredFailure ?? failure
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
