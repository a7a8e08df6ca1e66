/// Settings of a ``KafkaConsumer`` in a consumer group.
///
/// Offsets are always managed by the caller: nothing is committed or stored automatically
/// (`enable.auto.commit=false`, `enable.auto.offset.store=false`), so an offset is committed only once the caller
/// says its work is durable.
package struct KafkaConsumerConfiguration: Sendable, Hashable {
    /// The cluster to consume from.
    package var cluster: KafkaClusterConfiguration
    /// The consumer group (`group.id`).
    package var groupID: String
    /// The topics to subscribe to.
    package var topics: [String]
    /// The most messages one step of ``KafkaConsumer/events()`` returns. Default 1,000.
    package var pollBatchSize = 1_000
    /// How long one step of ``KafkaConsumer/events()`` waits for a first message. Default 100 ms.
    package var pollMaxWait: Duration = .milliseconds(100)
    /// Whether each message's bytes get a buffer of their own rather than slices of one buffer per poll. One buffer
    /// per poll costs one allocation per poll, but a message kept alive keeps its whole poll's bytes alive: a caller
    /// that holds messages for long (the worker queues them per partition, each moving at its own pace) sets this
    /// rather than copying each message again. Default false.
    package var buffersPerMessage = false
    /// How partitions are shared out on a rebalance. Default: cooperative-sticky (only moved partitions pause).
    package var rebalanceProtocol: RebalanceProtocol = .cooperativeSticky
    /// Where a partition without a committed offset starts (`auto.offset.reset`). Default earliest: a new group
    /// reads everything the topic still holds rather than skipping it.
    package var startWithoutCommittedOffset: StartOffset = .earliest
    /// How long the group waits for a silent member before reassigning its partitions (`session.timeout.ms`).
    /// Default 45 s.
    package var sessionTimeout: Duration = .seconds(45)
    /// How often the member heartbeats (`heartbeat.interval.ms`). Default 3 s.
    package var heartbeatInterval: Duration = .seconds(3)
    /// The longest time between two polls before the member is considered stuck and leaves the group
    /// (`max.poll.interval.ms`). Default 5 minutes.
    package var maxPollInterval: Duration = .seconds(300)

    /// A consumer configuration for the given cluster, group and topics, with the defaults above.
    package init(cluster: KafkaClusterConfiguration, groupID: String, topics: [String]) {
        self.cluster = cluster
        self.groupID = groupID
        self.topics = topics
    }

    /// The partition assignment strategy.
    package struct RebalanceProtocol: Sendable, Hashable {
        /// `partition.assignment.strategy`.
        package let assignmentStrategy: String
        /// Whether the strategy is incremental (cooperative) rather than eager (revoke everything, reassign).
        package let isCooperative: Bool

        /// Incremental: a rebalance revokes only the partitions that move.
        package static let cooperativeSticky = RebalanceProtocol(
            assignmentStrategy: "cooperative-sticky",
            isCooperative: true
        )
        /// Eager with the range assignor: every rebalance revokes all partitions, then assigns anew.
        package static let eagerRange = RebalanceProtocol(assignmentStrategy: "range", isCooperative: false)
        /// Eager with the round-robin assignor.
        package static let eagerRoundRobin = RebalanceProtocol(assignmentStrategy: "roundrobin", isCooperative: false)
    }

    /// `auto.offset.reset`.
    package struct StartOffset: RawRepresentable, Sendable, Hashable {
        /// The `auto.offset.reset` value.
        package let rawValue: String
        /// A start offset from an `auto.offset.reset` value.
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The oldest message the partition still holds.
        package static let earliest = StartOffset(rawValue: "earliest")
        /// Only messages produced after the consumer joined.
        package static let latest = StartOffset(rawValue: "latest")
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
