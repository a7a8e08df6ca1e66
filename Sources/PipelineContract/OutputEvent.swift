import KafkaClient
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The messages of the output topics: the contract downstream teams build on (Docs/output-topics.md). Workers
/// publish exactly these; tests and tools read them back with the same names.
package enum OutputEvent {
    /// CloudEvents 1.0 attributes of a decoded event (Kafka protocol binding, binary content mode: `ce_` headers).
    package enum CloudEventsHeader {
        package static let specVersion = "ce_specversion"
        package static let id = "ce_id"
        package static let type = "ce_type"
        package static let source = "ce_source"
        package static let time = "ce_time"
        package static let subject = "ce_subject"
        /// An extension attribute: the notification's subtype.
        package static let subtype = "ce_subtype"
    }

    /// `content-type` of the JSON values.
    package static let contentTypeHeader = "content-type"

    /// Header names of the dead-letter topic, besides the consumed message's own headers.
    package enum DeadLetterHeader {
        package static let status = "asnp-status"
        package static let reason = "asnp-reason"
        package static let sourceTopic = "asnp-source-topic"
        package static let sourcePartition = "asnp-source-partition"
        package static let sourceOffset = "asnp-source-offset"
    }

    /// What a decoded event's headers say about its notification.
    package struct DecodedAttributes: Sendable, Hashable {
        package var notificationUUID: UUID
        package var notificationType: String
        package var subtype: String?
        package var signedDate: Date?
        /// Apple's spelling: `Production`, `Sandbox`; nil when the notification does not say.
        package var environment: String?
        package var bundleID: String?
        package var originalTransactionID: String?

        package init(
            notificationUUID: UUID,
            notificationType: String,
            subtype: String? = nil,
            signedDate: Date? = nil,
            environment: String? = nil,
            bundleID: String? = nil,
            originalTransactionID: String? = nil
        ) {
            self.notificationUUID = notificationUUID
            self.notificationType = notificationType
            self.subtype = subtype
            self.signedDate = signedDate
            self.environment = environment
            self.bundleID = bundleID
            self.originalTransactionID = originalTransactionID
        }

        /// `ce_source`: `appstore/{bundleId}/{environment}`, `unknown` for what the notification does not say.
        package var source: String {
            "appstore/\(bundleID ?? "unknown")/\(environment ?? "unknown")"
        }
    }

    /// An event of the decoded topic: the notification's JSON with CloudEvents headers.
    package static func decoded(
        _ attributes: DecodedAttributes,
        json: String,
        key: String?,
        topic: String
    ) -> KafkaProducerMessage {
        var headers = [
            KafkaHeader(key: CloudEventsHeader.specVersion, string: "1.0"),
            KafkaHeader(key: CloudEventsHeader.id, string: attributes.notificationUUID.uuidString.lowercased()),
            KafkaHeader(key: CloudEventsHeader.type, string: attributes.notificationType),
            KafkaHeader(key: CloudEventsHeader.source, string: attributes.source),
            KafkaHeader(key: contentTypeHeader, string: "application/json"),
        ]
        if let signedDate = attributes.signedDate {
            headers.append(KafkaHeader(key: CloudEventsHeader.time, string: timestamp(signedDate)))
        }
        if let subject = attributes.originalTransactionID {
            headers.append(KafkaHeader(key: CloudEventsHeader.subject, string: subject))
        }
        if let subtype = attributes.subtype {
            headers.append(KafkaHeader(key: CloudEventsHeader.subtype, string: subtype))
        }
        return KafkaProducerMessage(
            topic: topic,
            key: key.map { ByteBuffer(string: $0) },
            value: ByteBuffer(string: json),
            headers: headers
        )
    }

    /// A record of the compacted state topic: a subscription's state as JSON, keyed by its originalTransactionId.
    package static func subscriptionState(json: String, key: String?, topic: String) -> KafkaProducerMessage {
        KafkaProducerMessage(
            topic: topic,
            key: key.map { ByteBuffer(string: $0) },
            value: ByteBuffer(string: json),
            headers: [KafkaHeader(key: contentTypeHeader, string: "application/json")]
        )
    }

    /// A dead letter: the rejected body as stored, the consumed message's headers (sorted by name), then why it
    /// was rejected and where it was read.
    package static func deadLetter(
        body: [UInt8],
        status: String,
        reason: String,
        consumedHeaders: [String: String],
        source: KafkaTopicPartitionOffset,
        key: String?,
        topic: String
    ) -> KafkaProducerMessage {
        var headers = consumedHeaders.sorted { $0.key < $1.key }.map { KafkaHeader(key: $0.key, string: $0.value) }
        headers += [
            KafkaHeader(key: DeadLetterHeader.status, string: status),
            KafkaHeader(key: DeadLetterHeader.reason, string: reason),
            KafkaHeader(key: DeadLetterHeader.sourceTopic, string: source.topic),
            KafkaHeader(key: DeadLetterHeader.sourcePartition, string: String(source.partition)),
            KafkaHeader(key: DeadLetterHeader.sourceOffset, string: String(source.offset)),
        ]
        return KafkaProducerMessage(
            topic: topic,
            key: key.map { ByteBuffer(string: $0) },
            value: ByteBuffer(bytes: body),
            headers: headers
        )
    }

    /// RFC 3339 in UTC with milliseconds.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
