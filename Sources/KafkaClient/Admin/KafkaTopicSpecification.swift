/// A topic to create: name, partition count, replication factor and topic-level settings.
package struct KafkaTopicSpecification: Sendable, Hashable {
    /// The topic name.
    package var name: String
    /// Partitions: the ceiling of consumer parallelism, since one partition is consumed by one member at a time.
    package var partitions: Int
    /// Copies of each partition; production clusters use 3.
    package var replicationFactor: Int
    /// Topic settings such as `cleanup.policy=compact` or `retention.ms`.
    package var configuration: [String: String]

    /// A topic specification; replication factor 1 and no topic settings unless given.
    package init(name: String, partitions: Int, replicationFactor: Int = 1, configuration: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configuration = configuration
    }
}
