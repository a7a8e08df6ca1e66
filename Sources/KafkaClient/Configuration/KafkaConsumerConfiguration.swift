/// Settings of a ``KafkaConsumer`` in a consumer group.
///
/// Offsets are always managed by the caller: nothing is committed or stored automatically
/// (`enable.auto.commit=false`, `enable.auto.offset.store=false`), so an offset is committed only once the caller
/// says its work is durable.
public struct KafkaConsumerConfiguration: Sendable, Hashable {
    /// The cluster to consume from.
    public var cluster: KafkaClusterConfiguration
    /// The consumer group (`group.id`).
    public var groupID: String
    /// The topics to subscribe to.
    public var topics: [String]
    /// The most messages one step of ``KafkaConsumer/events()`` returns. Default 1,000.
    public var pollBatchSize = 1_000
    /// How long one step of ``KafkaConsumer/events()`` waits for a first message. Default 100 ms.
    public var pollMaxWait: Duration = .milliseconds(100)
    /// How partitions are shared out on a rebalance. Default: cooperative-sticky (only moved partitions pause).
    public var rebalanceProtocol: RebalanceProtocol = .cooperativeSticky
    /// Where a partition without a committed offset starts (`auto.offset.reset`). Default earliest: a new group
    /// reads everything the topic still holds rather than skipping it.
    public var startWithoutCommittedOffset: StartOffset = .earliest
    /// How long the group waits for a silent member before reassigning its partitions (`session.timeout.ms`).
    /// Default 45 s.
    public var sessionTimeout: Duration = .seconds(45)
    /// How often the member heartbeats (`heartbeat.interval.ms`). Default 3 s.
    public var heartbeatInterval: Duration = .seconds(3)
    /// The longest time between two polls before the member is considered stuck and leaves the group
    /// (`max.poll.interval.ms`). Default 5 minutes.
    public var maxPollInterval: Duration = .seconds(300)

    /// A consumer configuration for the given cluster, group and topics, with the defaults above.
    public init(cluster: KafkaClusterConfiguration, groupID: String, topics: [String]) {
        self.cluster = cluster
        self.groupID = groupID
        self.topics = topics
    }

    /// The partition assignment strategy.
    public struct RebalanceProtocol: Sendable, Hashable {
        /// `partition.assignment.strategy`.
        public let assignmentStrategy: String
        /// Whether the strategy is incremental (cooperative) rather than eager (revoke everything, reassign).
        public let isCooperative: Bool

        /// Incremental: a rebalance revokes only the partitions that move.
        public static let cooperativeSticky = RebalanceProtocol(
            assignmentStrategy: "cooperative-sticky",
            isCooperative: true
        )
        /// Eager with the range assignor: every rebalance revokes all partitions, then assigns anew.
        public static let eagerRange = RebalanceProtocol(assignmentStrategy: "range", isCooperative: false)
        /// Eager with the round-robin assignor.
        public static let eagerRoundRobin = RebalanceProtocol(assignmentStrategy: "roundrobin", isCooperative: false)
    }

    /// `auto.offset.reset`.
    public struct StartOffset: RawRepresentable, Sendable, Hashable {
        /// The `auto.offset.reset` value.
        public let rawValue: String
        /// A start offset from an `auto.offset.reset` value.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The oldest message the partition still holds.
        public static let earliest = StartOffset(rawValue: "earliest")
        /// Only messages produced after the consumer joined.
        public static let latest = StartOffset(rawValue: "latest")
    }

    static let managedProperties: Set<String> = [
        "group.id", "enable.auto.commit", "enable.auto.offset.store", "partition.assignment.strategy",
        "rebalance_cb", "offset_commit_cb", "enable.partition.eof",
    ]

    func properties() throws(KafkaError) -> [String: String] {
        guard !groupID.isEmpty else { throw .invalidConfiguration("group.id is empty") }
        guard !topics.isEmpty, !topics.contains(where: \.isEmpty) else {
            throw .invalidConfiguration("name at least one topic to consume, and no empty topic name")
        }
        guard pollBatchSize > 0, pollMaxWait >= .zero else {
            throw .invalidConfiguration("pollBatchSize must be positive and pollMaxWait not negative")
        }
        guard sessionTimeout > .zero, heartbeatInterval > .zero, heartbeatInterval < sessionTimeout,
            maxPollInterval >= sessionTimeout
        else {
            throw .invalidConfiguration(
                "need 0 < heartbeatInterval < sessionTimeout <= maxPollInterval (heartbeat.interval.ms, "
                    + "session.timeout.ms, max.poll.interval.ms)"
            )
        }
        var properties = try cluster.properties(managed: Self.managedProperties)
        properties["group.id"] = groupID
        properties["enable.auto.commit"] = "false"
        properties["enable.auto.offset.store"] = "false"
        properties["enable.partition.eof"] = "false"
        properties["partition.assignment.strategy"] = rebalanceProtocol.assignmentStrategy
        properties["auto.offset.reset"] = properties["auto.offset.reset"] ?? startWithoutCommittedOffset.rawValue
        properties["session.timeout.ms"] = properties["session.timeout.ms"] ?? String(sessionTimeout.wholeMilliseconds)
        properties["heartbeat.interval.ms"] =
            properties["heartbeat.interval.ms"] ?? String(heartbeatInterval.wholeMilliseconds)
        properties["max.poll.interval.ms"] =
            properties["max.poll.interval.ms"] ?? String(maxPollInterval.wholeMilliseconds)
        return properties
    }
}
