import CRDKafka
import NIOCore

/// Copies consumed librdkafka messages into Swift values.
///
/// The bytes of a whole batch (values, keys, header values) are copied into one buffer and every message gets
/// slices of it: one allocation per batch instead of several per message, which is most of the consumer's own cost.
/// With ``KafkaConsumerConfiguration/buffersPerMessage`` each message's bytes go into a buffer of their own instead.
enum RDKafkaMessage {
    /// The bytes `copy` will take from the message into the batch's buffer.
    static func byteCount(of message: UnsafeMutablePointer<rd_kafka_message_t>) -> Int {
        var total = message.pointee.len + message.pointee.key_len
        forEachHeader(of: message) { _, _, size in total += size }
        return total
    }

    /// A message whose bytes were written to the batch's buffer, not yet sliced out of it. Slicing waits until the
    /// whole batch is written: a write to a buffer that slices already share would copy it.
    struct Copied {
        var topic: String
        var partition: Int32
        var offset: Int64
        var value: Range<Int>?
        var key: Range<Int>?
        var headers: [(key: String, value: Range<Int>?)]
        var timestamp: KafkaMessage.Timestamp?

        /// The message, its bytes sliced out of `slab` (sharing its storage).
        func message(in slab: ByteBuffer) -> KafkaMessage {
            func slice(_ range: Range<Int>) -> ByteBuffer { slab.getSlice(at: range.lowerBound, length: range.count)! }
            return KafkaMessage(
                topic: topic,
                partition: partition,
                offset: offset,
                key: key.map(slice),
                value: value.map(slice) ?? ByteBuffer(),
                headers: headers.map { KafkaHeader(key: $0.key, value: $0.value.map(slice)) },
                timestamp: timestamp
            )
        }
    }

    /// Appends the message's bytes to `slab`. The caller still owns and destroys the C message.
    static func copy(
        _ message: UnsafeMutablePointer<rd_kafka_message_t>,
        topic: String,
        into slab: inout ByteBuffer
    ) -> Copied {
        let pointee = message.pointee
        let value = pointee.payload.map { append($0, count: pointee.len, to: &slab) }
        let key = pointee.key.map { append($0, count: pointee.key_len, to: &slab) }
        var headers: [(key: String, value: Range<Int>?)] = []
        forEachHeader(of: message) { name, value, size in
            headers.append((name.map { String(cString: $0) } ?? "", value.map { append($0, count: size, to: &slab) }))
        }

        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let milliseconds = rd_kafka_message_timestamp(message, &timestampType)
        let timestamp: KafkaMessage.Timestamp? =
            timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
            ? nil
            : .init(
                millisecondsSince1970: milliseconds,
                isLogAppendTime: timestampType == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME
            )
        return Copied(
            topic: topic,
            partition: pointee.partition,
            offset: pointee.offset,
            value: value,
            key: key,
            headers: headers,
            timestamp: timestamp
        )
    }

    /// The topic of a C message; names are cached per batch, as a batch usually holds few topics.
    static func topicName(of message: UnsafeMutablePointer<rd_kafka_message_t>, cache: inout [OpaquePointer: String])
        -> String
    {
        guard let topic = message.pointee.rkt else { return "" }
        if let name = cache[topic] { return name }
        let name = String(cString: rd_kafka_topic_name(topic))
        cache[topic] = name
        return name
    }

    /// Appends `count` bytes to `slab` and returns where they are.
    private static func append(_ bytes: UnsafeRawPointer, count: Int, to slab: inout ByteBuffer) -> Range<Int> {
        let start = slab.writerIndex
        slab.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count))
        return start..<start + count
    }

    private static func forEachHeader(
        of message: UnsafeMutablePointer<rd_kafka_message_t>,
        _ body: (UnsafePointer<CChar>?, UnsafeRawPointer?, Int) -> Void
    ) {
        var headers: OpaquePointer?
        guard rd_kafka_message_headers(message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR, let headers else { return }
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(headers, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            body(name, value, size)
            index += 1
        }
    }
}
