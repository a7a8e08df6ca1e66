import NIOCore

/// A consumed message, copied out of librdkafka: it owns its bytes.
///
/// The messages of one poll share one buffer (each `ByteBuffer` is a slice of it), so keeping a single message alive
/// keeps its whole batch's bytes alive; copy the bytes out if a few messages are kept for long.
public struct KafkaMessage: Sendable {
    /// The topic the message was consumed from.
    public var topic: String
    /// The partition of the topic the message was consumed from.
    public var partition: Int32
    /// The message's offset: its position in the partition.
    public var offset: Int64
    /// The message key; nil when the message was produced without one.
    public var key: ByteBuffer?
    /// The message payload.
    public var value: ByteBuffer
    /// The record headers, in the order they were produced.
    public var headers: [KafkaHeader]
    /// The record timestamp (producer create time, or broker append time per topic setting), if the record has one.
    public var timestamp: Timestamp?

    /// A message with the given fields; the consumer builds these from librdkafka's messages.
    public init(
        topic: String,
        partition: Int32,
        offset: Int64,
        key: ByteBuffer?,
        value: ByteBuffer,
        headers: [KafkaHeader],
        timestamp: Timestamp?
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    /// The message's topic and partition.
    public var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }

    /// The offset to commit once this message is processed: the next one to read.
    public var nextOffset: KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(topicPartition, offset: offset + 1)
    }

    /// A record timestamp.
    public struct Timestamp: Sendable, Hashable {
        /// Milliseconds since 1970-01-01T00:00:00Z.
        public var millisecondsSince1970: Int64
        /// Whether the producer set it (create time) or the broker (log append time).
        public var isLogAppendTime: Bool

        /// A timestamp in milliseconds since 1970, set by the producer or the broker.
        public init(millisecondsSince1970: Int64, isLogAppendTime: Bool) {
            self.millisecondsSince1970 = millisecondsSince1970
            self.isLogAppendTime = isLogAppendTime
        }
    }
}
