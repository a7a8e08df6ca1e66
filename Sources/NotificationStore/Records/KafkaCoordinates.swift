/// A message's place in Kafka: where a notification was read from, recorded with it so that it can be found,
/// replayed, and never stored twice when Kafka delivers it again.
public struct KafkaCoordinates: Sendable, Hashable, CustomStringConvertible {
    /// The topic.
    public var topic: String
    /// The partition.
    public var partition: Int32
    /// The offset within the partition.
    public var offset: Int64

    /// Creates coordinates.
    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    /// `topic/partition@offset`.
    public var description: String { "\(topic)/\(partition)@\(offset)" }
}
