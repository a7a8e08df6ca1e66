extension KafkaMockCluster {
    /// A Kafka protocol request kind (its API key), for error injection.
    package struct API: RawRepresentable, Sendable, Hashable {
        /// The Kafka protocol API key.
        package let rawValue: Int16
        /// A request kind from its API key.
        package init(rawValue: Int16) { self.rawValue = rawValue }

        /// Produce requests (API key 0).
        package static let produce = API(rawValue: 0)
        /// Fetch requests (API key 1): consumers reading messages.
        package static let fetch = API(rawValue: 1)
        /// ListOffsets requests (API key 2): looking up watermarks or offsets by time.
        package static let listOffsets = API(rawValue: 2)
        /// Metadata requests (API key 3): topics, partitions and their leaders.
        package static let metadata = API(rawValue: 3)
        /// OffsetCommit requests (API key 8): a consumer group committing offsets.
        package static let offsetCommit = API(rawValue: 8)
        /// OffsetFetch requests (API key 9): a consumer group reading its committed offsets.
        package static let offsetFetch = API(rawValue: 9)
        /// FindCoordinator requests (API key 10): locating a group's or transaction's coordinator.
        package static let findCoordinator = API(rawValue: 10)
        /// JoinGroup requests (API key 11): a member joining a consumer group or a rebalance.
        package static let joinGroup = API(rawValue: 11)
        /// Heartbeat requests (API key 12): a member keeping its group membership alive.
        package static let heartbeat = API(rawValue: 12)
        /// LeaveGroup requests (API key 13): a member leaving its consumer group.
        package static let leaveGroup = API(rawValue: 13)
        /// SyncGroup requests (API key 14): members receiving their partition assignment.
        package static let syncGroup = API(rawValue: 14)
        /// ApiVersions requests (API key 18): a client's first request on every connection.
        package static let apiVersions = API(rawValue: 18)
        /// InitProducerId requests (API key 22): an idempotent producer obtaining its producer id.
        package static let initProducerID = API(rawValue: 22)
    }

    /// An error code a broker answers with (Kafka protocol error codes).
    package struct BrokerError: RawRepresentable, Sendable, Hashable {
        /// The Kafka protocol error code.
        package let rawValue: Int32
        /// A broker error from its Kafka protocol error code.
        package init(rawValue: Int32) { self.rawValue = rawValue }

        /// No error (0): the request is answered as usual.
        package static let none = BrokerError(rawValue: 0)
        /// UNKNOWN_TOPIC_OR_PARTITION (3): the broker does not host this topic or partition.
        package static let unknownTopicOrPartition = BrokerError(rawValue: 3)
        /// LEADER_NOT_AVAILABLE (5): the partition has no leader, for example during an election; clients retry.
        package static let leaderNotAvailable = BrokerError(rawValue: 5)
        /// NOT_LEADER_OR_FOLLOWER (6, formerly NOT_LEADER_FOR_PARTITION): the broker does not lead the partition;
        /// clients refresh metadata and retry.
        package static let notLeaderForPartition = BrokerError(rawValue: 6)
        /// REQUEST_TIMED_OUT (7): the broker did not complete the request in time.
        package static let requestTimedOut = BrokerError(rawValue: 7)
        /// MESSAGE_TOO_LARGE (10): the message exceeds the broker's or topic's size limit; not retriable.
        package static let messageTooLarge = BrokerError(rawValue: 10)
        /// COORDINATOR_NOT_AVAILABLE (15): the group coordinator is not available yet; clients retry.
        package static let coordinatorNotAvailable = BrokerError(rawValue: 15)
        /// NOT_COORDINATOR (16): the broker is not the group's coordinator; clients look it up again.
        package static let notCoordinator = BrokerError(rawValue: 16)
        /// NOT_ENOUGH_REPLICAS (19): fewer in-sync replicas than min.insync.replicas; producers retry.
        package static let notEnoughReplicas = BrokerError(rawValue: 19)
        /// NOT_ENOUGH_REPLICAS_AFTER_APPEND (20): written, but too few in-sync replicas to confirm it; producers retry.
        package static let notEnoughReplicasAfterAppend = BrokerError(rawValue: 20)
        /// REBALANCE_IN_PROGRESS (27): the consumer group is rebalancing; members rejoin.
        package static let rebalanceInProgress = BrokerError(rawValue: 27)
        /// TOPIC_AUTHORIZATION_FAILED (29): the client may not access the topic; not retriable.
        package static let topicAuthorizationFailed = BrokerError(rawValue: 29)
    }
}
