import KafkaClient
import NIOCore
import NIOFoundationCompat

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RawNotificationHeaders {
    /// The headers as Kafka message headers, in the order they are written.
    package var kafkaHeaders: [KafkaHeader] {
        fields.map { KafkaHeader(key: $0.name, string: $0.value) }
    }

    /// A raw-topic message as every writer of the raw topic makes it (the ingress, the reconciler, `asnp replay`):
    /// the exact body, these headers, and the key peeked from the body (``PartitionKey/peek(body:version:)``), so
    /// the body lands on the partition of its subscription. Unkeyed only when the body is not a JSON object.
    package func message(body: ByteBuffer, topic: String) -> KafkaProducerMessage {
        let key = PartitionKey.peek(body: Data(buffer: body, byteTransferStrategy: .noCopy), version: version)
        return message(body: body, key: key, topic: topic)
    }

    /// A raw-topic message with a key already peeked (the ingress refuses a body before it has one).
    package func message(body: ByteBuffer, key: PartitionKey?, topic: String) -> KafkaProducerMessage {
        KafkaProducerMessage(
            topic: topic,
            key: key.map { ByteBuffer(string: $0.value) },
            value: body,
            headers: kafkaHeaders
        )
    }
}
