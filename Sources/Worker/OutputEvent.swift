import KafkaClient
import NIOCore
import NotificationStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The Kafka message an outbox row publishes (the contract in Docs/output-topics.md).
enum OutputEvent {
    /// Header names of the dead-letter topic, besides the consumed message's own headers.
    enum DeadLetterHeader {
        static let status = "asnp-status"
        static let reason = "asnp-reason"
        static let sourceTopic = "asnp-source-topic"
        static let sourcePartition = "asnp-source-partition"
        static let sourceOffset = "asnp-source-offset"
    }

    /// The message for `row`, or nil when there is nothing to publish (its notification or rejection was deleted).
    static func message(for row: OutboxMessage, topics: OutputTopics) -> KafkaProducerMessage? {
        switch row.payload {
        case .decoded(let event):
            // CloudEvents 1.0, Kafka protocol binding, binary content mode: attributes as ce_ headers.
            var headers = [
                KafkaHeader(key: "ce_specversion", string: "1.0"),
                KafkaHeader(key: "ce_id", string: event.notificationUUID.uuidString.lowercased()),
                KafkaHeader(key: "ce_type", string: event.notificationType),
                KafkaHeader(
                    key: "ce_source",
                    string: "appstore/\(event.bundleID ?? "unknown")/\(event.environment ?? "unknown")"
                ),
                KafkaHeader(key: "content-type", string: "application/json"),
            ]
            if let signedDate = event.signedDate {
                headers.append(KafkaHeader(key: "ce_time", string: timestamp(signedDate)))
            }
            if let subject = event.originalTransactionID {
                headers.append(KafkaHeader(key: "ce_subject", string: subject))
            }
            if let subtype = event.subtype {
                headers.append(KafkaHeader(key: "ce_subtype", string: subtype))
            }
            return KafkaProducerMessage(
                topic: topics.decoded,
                key: row.key.map { ByteBuffer(string: $0) },
                value: ByteBuffer(string: event.json),
                headers: headers
            )
        case .subscriptionState(let json):
            return KafkaProducerMessage(
                topic: topics.subscriptionState,
                key: row.key.map { ByteBuffer(string: $0) },
                value: ByteBuffer(string: json),
                headers: [KafkaHeader(key: "content-type", string: "application/json")]
            )
        case .deadLetter(let letter):
            var headers = letter.headers.sorted { $0.key < $1.key }.map { KafkaHeader(key: $0.key, string: $0.value) }
            headers += [
                KafkaHeader(key: DeadLetterHeader.status, string: letter.status),
                KafkaHeader(key: DeadLetterHeader.reason, string: letter.reason),
                KafkaHeader(key: DeadLetterHeader.sourceTopic, string: letter.source.topic),
                KafkaHeader(key: DeadLetterHeader.sourcePartition, string: String(letter.source.partition)),
                KafkaHeader(key: DeadLetterHeader.sourceOffset, string: String(letter.source.offset)),
            ]
            return KafkaProducerMessage(
                topic: topics.deadLetter,
                key: row.key.map { ByteBuffer(string: $0) },
                value: ByteBuffer(bytes: letter.body),
                headers: headers
            )
        case .missing:
            return nil
        }
    }

    /// RFC 3339 in UTC with milliseconds.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
