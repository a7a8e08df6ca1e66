import AppStoreModels
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
    /// CloudEvents 1.0 attributes of the output events (Kafka protocol binding, binary content mode: `ce_` headers).
    package enum CloudEventsHeader {
        package static let specVersion = "ce_specversion"
        package static let id = "ce_id"
        package static let type = "ce_type"
        package static let source = "ce_source"
        package static let time = "ce_time"
        package static let subject = "ce_subject"
        /// The URI of the value's JSON Schema (``Schema``).
        package static let dataSchema = "ce_dataschema"
        /// An extension attribute of decoded events: the notification's subtype.
        package static let subtype = "ce_subtype"
        /// An extension attribute of decoded events: the notification format, `1` or `2`.
        package static let notificationVersion = "ce_notificationversion"
        /// Extension attributes of dead letters: why the body was rejected, and where it was consumed.
        package static let rejectionStatus = "ce_rejectionstatus"
        package static let rejectionReason = "ce_rejectionreason"
        package static let sourceTopic = "ce_sourcetopic"
        package static let sourcePartition = "ce_sourcepartition"
        package static let sourceOffset = "ce_sourceoffset"
        /// CloudEvents' distributed tracing extension: the trace the event starts from (``Trace``).
        package static let traceparent = "ce_traceparent"
        package static let tracestate = "ce_tracestate"
    }

    /// The trace an event belongs to: its notification's (Docs/output-topics.md, "Trace context"). Written twice, with
    /// the same values: as W3C Trace Context headers (`traceparent`, `tracestate`), which OpenTelemetry's Kafka
    /// instrumentations read, and as CloudEvents' distributed tracing extension (`ce_traceparent`, `ce_tracestate`),
    /// which carries the trace a multi-hop transmission started from and which a consumer's middleware must not
    /// change.
    package struct Trace: Sendable, Hashable {
        package var traceparent: String
        package var tracestate: String?

        package init(traceparent: String, tracestate: String?) {
            self.traceparent = traceparent
            self.tracestate = tracestate
        }

        /// The four headers, `tracestate`'s two only when there is one.
        var headers: [KafkaHeader] {
            var headers = [
                KafkaHeader(key: TraceContextHeaders.traceparent, string: traceparent),
                KafkaHeader(key: CloudEventsHeader.traceparent, string: traceparent),
            ]
            if let tracestate {
                headers.append(KafkaHeader(key: TraceContextHeaders.tracestate, string: tracestate))
                headers.append(KafkaHeader(key: CloudEventsHeader.tracestate, string: tracestate))
            }
            return headers
        }
    }

    /// `content-type` of the values.
    package static let contentTypeHeader = "content-type"

    /// `ce_type` of the state topic's events and of dead letters; decoded events have Apple's type, namespaced by
    /// version (``DecodedAttributes/type``).
    package enum EventType {
        package static let subscriptionState = "asnp.subscription.state"
        package static let rejected = "asnp.notification.rejected"
    }

    /// The JSON Schemas of the values, as `ce_dataschema` names them: `urn:asnp:contract:<name>:<major>`, the file
    /// `Docs/contract/<name>/<major>.schema.json` (Docs/contract/README.md).
    package enum Schema: String, CaseIterable, Sendable {
        case decodedV2 = "decoded-v2"
        case decodedV1 = "decoded-v1"
        case subscriptionState = "subscription-state"
        case deadLetter = "dead-letter"

        /// The major version events carry today; a breaking change publishes a new one side by side.
        package var major: Int { 1 }
        /// The `ce_dataschema` value.
        package var uri: String { "urn:asnp:contract:\(rawValue):\(major)" }
        /// The file, relative to Docs/contract.
        package var file: String { "\(rawValue)/\(major).schema.json" }
    }

    /// What a decoded event's headers say about its notification.
    package struct DecodedAttributes: Sendable, Hashable {
        package var notificationUUID: UUID
        /// The notification format: 1 or 2.
        package var version: Int
        package var notificationType: String
        package var subtype: String?
        package var signedDate: Date?
        /// Apple's spelling: `Production`, `Sandbox`; nil when the notification does not say.
        package var environment: String?
        package var bundleID: String?
        package var originalTransactionID: String?

        package init(
            notificationUUID: UUID,
            version: Int,
            notificationType: String,
            subtype: String? = nil,
            signedDate: Date? = nil,
            environment: String? = nil,
            bundleID: String? = nil,
            originalTransactionID: String? = nil
        ) {
            self.notificationUUID = notificationUUID
            self.version = version
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

        /// `ce_type`: Apple's type namespaced by format, e.g. `com.apple.appstore.v2.DID_RENEW` (V1 and V2 share
        /// names with different shapes).
        package var type: String { "com.apple.appstore.v\(version).\(notificationType)" }

        /// The schema of the value.
        package var schema: Schema { version == 1 ? .decodedV1 : .decodedV2 }
    }

    /// What a state event's headers say about its subscription.
    package struct StateAttributes: Sendable, Hashable {
        package var originalTransactionID: String
        /// The newest notification merged into the state (`last_notification_uuid`): the event's id. It names the
        /// notification, not the state: another state may carry the same one (Docs/contract/README.md).
        package var lastNotificationUUID: UUID
        package var lastSignedDate: Date
        package var environment: String?
        package var bundleID: String?

        package init(
            originalTransactionID: String,
            lastNotificationUUID: UUID,
            lastSignedDate: Date,
            environment: String?,
            bundleID: String?
        ) {
            self.originalTransactionID = originalTransactionID
            self.lastNotificationUUID = lastNotificationUUID
            self.lastSignedDate = lastSignedDate
            self.environment = environment
            self.bundleID = bundleID
        }

        /// `ce_source`: `asnp/subscriptions/{bundleId}/{environment}`.
        package var source: String {
            "asnp/subscriptions/\(bundleID ?? "unknown")/\(environment ?? "unknown")"
        }
    }

    /// An event of the decoded topic: the notification's JSON with CloudEvents headers.
    package static func decoded(
        _ attributes: DecodedAttributes,
        json: String,
        key: String?,
        topic: String,
        trace: Trace? = nil
    ) -> KafkaProducerMessage {
        var headers = [
            KafkaHeader(key: CloudEventsHeader.specVersion, string: "1.0"),
            KafkaHeader(key: CloudEventsHeader.id, string: attributes.notificationUUID.uuidString.lowercased()),
            KafkaHeader(key: CloudEventsHeader.type, string: attributes.type),
            KafkaHeader(key: CloudEventsHeader.source, string: attributes.source),
            KafkaHeader(key: CloudEventsHeader.dataSchema, string: attributes.schema.uri),
            KafkaHeader(key: CloudEventsHeader.notificationVersion, string: String(attributes.version)),
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
        headers += trace?.headers ?? []
        return KafkaProducerMessage(
            topic: topic,
            key: key.map { ByteBuffer(string: $0) },
            value: ByteBuffer(string: json),
            headers: headers
        )
    }

    /// A record of the compacted state topic: a subscription's state as JSON, keyed by its originalTransactionId.
    package static func subscriptionState(
        _ attributes: StateAttributes,
        json: String,
        topic: String,
        trace: Trace? = nil
    ) -> KafkaProducerMessage {
        KafkaProducerMessage(
            topic: topic,
            key: ByteBuffer(string: attributes.originalTransactionID),
            value: ByteBuffer(string: json),
            headers: [
                KafkaHeader(key: CloudEventsHeader.specVersion, string: "1.0"),
                KafkaHeader(key: CloudEventsHeader.id, string: attributes.lastNotificationUUID.uuidString.lowercased()),
                KafkaHeader(key: CloudEventsHeader.type, string: EventType.subscriptionState),
                KafkaHeader(key: CloudEventsHeader.source, string: attributes.source),
                KafkaHeader(key: CloudEventsHeader.dataSchema, string: Schema.subscriptionState.uri),
                KafkaHeader(key: contentTypeHeader, string: "application/json"),
                KafkaHeader(key: CloudEventsHeader.time, string: timestamp(attributes.lastSignedDate)),
                KafkaHeader(key: CloudEventsHeader.subject, string: attributes.originalTransactionID),
            ] + (trace?.headers ?? [])
        )
    }

    /// A dead letter: the rejected body as stored, the consumed message's headers (sorted by name; with a `trace`, its
    /// `traceparent` and `tracestate` in their place), then CloudEvents attributes saying why it was rejected and
    /// where it was read. Its content type is JSON when the body is (then it names the dead-letter schema), bytes
    /// otherwise.
    package static func deadLetter(
        body: [UInt8],
        status: String,
        reason: String,
        receivedAt: Date,
        consumedHeaders: [String: String],
        source: KafkaTopicPartitionOffset,
        key: String?,
        topic: String,
        trace: Trace? = nil
    ) -> KafkaProducerMessage {
        let traceHeaders: Set = [TraceContextHeaders.traceparent, TraceContextHeaders.tracestate]
        var headers = consumedHeaders.sorted { $0.key < $1.key }
            .filter { trace == nil || !traceHeaders.contains($0.key) }
            .map { KafkaHeader(key: $0.key, string: $0.value) }
        headers += [
            KafkaHeader(key: CloudEventsHeader.specVersion, string: "1.0"),
            KafkaHeader(key: CloudEventsHeader.id, string: "\(source.topic)/\(source.partition)/\(source.offset)"),
            KafkaHeader(key: CloudEventsHeader.type, string: EventType.rejected),
            KafkaHeader(key: CloudEventsHeader.source, string: "asnp/\(source.topic)"),
            KafkaHeader(key: CloudEventsHeader.time, string: timestamp(receivedAt)),
            KafkaHeader(key: CloudEventsHeader.rejectionStatus, string: status),
            KafkaHeader(key: CloudEventsHeader.rejectionReason, string: reason),
            KafkaHeader(key: CloudEventsHeader.sourceTopic, string: source.topic),
            KafkaHeader(key: CloudEventsHeader.sourcePartition, string: String(source.partition)),
            KafkaHeader(key: CloudEventsHeader.sourceOffset, string: String(source.offset)),
        ]
        if isJSON(body) {
            headers.append(KafkaHeader(key: CloudEventsHeader.dataSchema, string: Schema.deadLetter.uri))
            headers.append(KafkaHeader(key: contentTypeHeader, string: "application/json"))
        } else {
            headers.append(KafkaHeader(key: contentTypeHeader, string: "application/octet-stream"))
        }
        headers += trace?.headers ?? []
        return KafkaProducerMessage(
            topic: topic,
            key: key.map { ByteBuffer(string: $0) },
            value: ByteBuffer(bytes: body),
            headers: headers
        )
    }

    /// Whether `bytes` are one JSON value in UTF-8 (without a byte order mark, which JSON readers differ on).
    package static func isJSON(_ bytes: [UInt8]) -> Bool {
        guard !bytes.starts(with: [0xEF, 0xBB, 0xBF]), String(validating: bytes, as: UTF8.self) != nil else {
            return false
        }
        return (try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) != nil
    }

    /// RFC 3339 in UTC with milliseconds.
    package static func timestamp(_ date: Date) -> String {
        RFC3339Timestamp.string(from: date)
    }
}
