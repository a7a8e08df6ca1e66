import NIOCore

/// A consumed message, copied out of librdkafka: it owns its bytes.
public struct KafkaMessage: Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: ByteBuffer?
    public var value: ByteBuffer
    public var headers: [KafkaHeader]
    /// The record timestamp (producer create time, or broker append time per topic setting), if the record has one.
    public var timestamp: Timestamp?

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

        public init(millisecondsSince1970: Int64, isLogAppendTime: Bool) {
            self.millisecondsSince1970 = millisecondsSince1970
            self.isLogAppendTime = isLogAppendTime
        }
    }
}
