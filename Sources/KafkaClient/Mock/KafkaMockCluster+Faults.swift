extension KafkaMockCluster {
    /// A Kafka protocol request kind (its API key), for error injection.
    public struct API: RawRepresentable, Sendable, Hashable {
        public let rawValue: Int16
        public init(rawValue: Int16) { self.rawValue = rawValue }

        public static let produce = API(rawValue: 0)
        public static let fetch = API(rawValue: 1)
        public static let listOffsets = API(rawValue: 2)
        public static let metadata = API(rawValue: 3)
        public static let offsetCommit = API(rawValue: 8)
        public static let offsetFetch = API(rawValue: 9)
        public static let findCoordinator = API(rawValue: 10)
        public static let joinGroup = API(rawValue: 11)
        public static let heartbeat = API(rawValue: 12)
        public static let leaveGroup = API(rawValue: 13)
        public static let syncGroup = API(rawValue: 14)
        public static let initProducerID = API(rawValue: 22)
    }

    /// An error code a broker answers with (Kafka protocol error codes).
    public struct BrokerError: RawRepresentable, Sendable, Hashable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let unknownTopicOrPartition = BrokerError(rawValue: 3)
        public static let leaderNotAvailable = BrokerError(rawValue: 5)
        public static let notLeaderForPartition = BrokerError(rawValue: 6)
        public static let requestTimedOut = BrokerError(rawValue: 7)
        public static let messageTooLarge = BrokerError(rawValue: 10)
        public static let coordinatorNotAvailable = BrokerError(rawValue: 15)
        public static let notCoordinator = BrokerError(rawValue: 16)
        public static let notEnoughReplicas = BrokerError(rawValue: 19)
        public static let notEnoughReplicasAfterAppend = BrokerError(rawValue: 20)
        public static let rebalanceInProgress = BrokerError(rawValue: 27)
        public static let topicAuthorizationFailed = BrokerError(rawValue: 29)
    }
}
