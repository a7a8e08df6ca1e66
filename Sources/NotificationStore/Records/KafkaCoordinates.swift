/// A message's place in Kafka: where a notification was read from, recorded with it so that it can be found,
/// replayed, and never stored twice when Kafka delivers it again.
package struct KafkaCoordinates: Sendable, Hashable, CustomStringConvertible {
    /// The topic.
    package var topic: String
    /// The partition.
    package var partition: Int32
    /// The offset within the partition.
    package var offset: Int64

    /// Creates coordinates.
    package init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    /// `topic/partition@offset`.
    package var description: String { "\(topic)/\(partition)@\(offset)" }
}
