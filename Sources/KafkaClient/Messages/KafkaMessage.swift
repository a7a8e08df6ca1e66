import NIOCore

/// A consumed message, copied out of librdkafka: it owns its bytes.
///
/// The messages of one poll share one buffer (each `ByteBuffer` is a slice of it), so keeping a single message alive
/// keeps its whole batch's bytes alive, unless the consumer gives each message a buffer of its own
/// (``KafkaConsumerConfiguration/buffersPerMessage``).
package struct KafkaMessage: Sendable {
    /// The topic the message was consumed from.
    package var topic: String
    /// The partition of the topic the message was consumed from.
    package var partition: Int32
    /// The message's offset: its position in the partition.
    package var offset: Int64
    /// The message key; nil when the message was produced without one.
    package var key: ByteBuffer?
    /// The message payload.
    package var value: ByteBuffer
    /// The record headers, in the order they were produced.
    package var headers: [KafkaHeader]
    /// The record timestamp (producer create time, or broker append time per topic setting), if the record has one.
    package var timestamp: Timestamp?

    /// A message with the given fields; the consumer builds these from librdkafka's messages.
    package init(
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
    package var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }

    /// The offset to commit once this message is processed: the next one to read.
    package var nextOffset: KafkaTopicPartitionOffset {
        KafkaTopicPartitionOffset(topicPartition, offset: offset + 1)
    }

    /// A record timestamp.
    package struct Timestamp: Sendable, Hashable {
        /// Milliseconds since 1970-01-01T00:00:00Z.
        package var millisecondsSince1970: Int64
        /// Whether the producer set it (create time) or the broker (log append time).
        package var isLogAppendTime: Bool

        /// A timestamp in milliseconds since 1970, set by the producer or the broker.
        package init(millisecondsSince1970: Int64, isLogAppendTime: Bool) {
            self.millisecondsSince1970 = millisecondsSince1970
            self.isLogAppendTime = isLogAppendTime
        }
    }
}
