/// A topic to create: name, partition count, replication factor and topic-level settings.
public struct KafkaTopicSpecification: Sendable, Hashable {
    /// The topic name.
    public var name: String
    /// Partitions: the ceiling of consumer parallelism, since one partition is consumed by one member at a time.
    public var partitions: Int
    /// Copies of each partition; production clusters use 3.
    public var replicationFactor: Int
    /// Topic settings such as `cleanup.policy=compact` or `retention.ms`.
    public var configuration: [String: String]

    /// A topic specification; replication factor 1 and no topic settings unless given.
    public init(name: String, partitions: Int, replicationFactor: Int = 1, configuration: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configuration = configuration
    }
}
