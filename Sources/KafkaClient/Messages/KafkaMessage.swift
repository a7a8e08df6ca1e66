import NIOCore

/// A consumed message, copied out of librdkafka: it owns its bytes.
///
/// The messages of one poll share one buffer (each `ByteBuffer` is a slice of it), so keeping a single message alive
/// keeps its whole batch's bytes alive; keep ``detached()`` copies of messages held for long.
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

    /// The message with its bytes copied into one buffer of its own, so that keeping it does not keep the rest of
    /// its poll's shared buffer alive.
    package func detached() -> KafkaMessage {
        var total = value.readableBytes + (key?.readableBytes ?? 0)
        for header in headers { total += header.value?.readableBytes ?? 0 }
        var buffer = ByteBufferAllocator().buffer(capacity: total)
        func append(_ bytes: ByteBuffer) -> Range<Int> {
            let start = buffer.writerIndex
            buffer.writeImmutableBuffer(bytes)
            return start..<buffer.writerIndex
        }
        let valueRange = append(value)
        let keyRange = key.map(append)
        let headerRanges = headers.map { $0.value.map(append) }
        // Slices are taken once every byte is written: writing to a buffer that slices share would copy it.
        func slice(_ range: Range<Int>) -> ByteBuffer { buffer.getSlice(at: range.lowerBound, length: range.count)! }
        return KafkaMessage(
            topic: topic,
            partition: partition,
            offset: offset,
            key: keyRange.map(slice),
            value: slice(valueRange),
            headers: zip(headers, headerRanges).map { KafkaHeader(key: $0.key, value: $1.map(slice)) },
            timestamp: timestamp
        )
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
