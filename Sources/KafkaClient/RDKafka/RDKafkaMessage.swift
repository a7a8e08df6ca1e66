import CRDKafka
import NIOCore

/// Copies consumed librdkafka messages into Swift values.
enum RDKafkaMessage {
    /// A Swift copy of the message. The caller still owns and destroys the C message.
    static func copy(_ message: UnsafeMutablePointer<rd_kafka_message_t>, topic: String) -> KafkaMessage {
        let pointee = message.pointee
        let value =
            pointee.payload.map { ByteBuffer(bytes: UnsafeRawBufferPointer(start: $0, count: pointee.len)) }
            ?? ByteBuffer()
        let key = pointee.key.map { ByteBuffer(bytes: UnsafeRawBufferPointer(start: $0, count: pointee.key_len)) }

        var headers: [KafkaHeader] = []
        var cHeaders: OpaquePointer?
        if rd_kafka_message_headers(message, &cHeaders) == RD_KAFKA_RESP_ERR_NO_ERROR, let cHeaders {
            headers.reserveCapacity(rd_kafka_header_cnt(cHeaders))
            var index = 0
            var name: UnsafePointer<CChar>?
            var headerValue: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(cHeaders, index, &name, &headerValue, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                headers.append(
                    KafkaHeader(
                        key: name.map { String(cString: $0) } ?? "",
                        value: headerValue.map { ByteBuffer(bytes: UnsafeRawBufferPointer(start: $0, count: size)) }
                    )
                )
                index += 1
            }
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
        return KafkaMessage(
            topic: topic,
            partition: pointee.partition,
            offset: pointee.offset,
            key: key,
            value: value,
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
}
