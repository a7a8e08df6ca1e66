#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An outbox row with what it publishes: read by ``NotificationStore/pendingOutbox(source:limit:)``, deleted by
/// ``NotificationStore/deleteOutbox(_:)`` once the broker acknowledged it.
public struct OutboxMessage: Sendable, Hashable {
    /// What a row publishes, by stream.
    public enum Payload: Sendable, Hashable {
        /// A new notification: its `decoded` JSON and the facts its event headers carry.
        case decoded(DecodedEvent)
        /// A subscription's state after an accepted change, as JSON (`SubscriptionState`).
        case subscriptionState(json: String)
        /// A rejected body, as stored (V1 passwords redacted), with why and where it came from.
        case deadLetter(DeadLetter)
        /// The notification or rejected row it referred to is gone (deleted by an operator): nothing to publish.
        case missing
    }

    public struct DecodedEvent: Sendable, Hashable {
        public var notificationUUID: UUID
        public var notificationType: String
        public var subtype: String?
        public var signedDate: Date?
        public var environment: String?
        public var bundleID: String?
        public var originalTransactionID: String?
        /// The `decoded` column: the notification with its transaction and renewal info decoded.
        public var json: String
    }

    public struct DeadLetter: Sendable, Hashable {
        public var status: String
        public var reason: String
        public var body: [UInt8]
        /// The consumed message's headers.
        public var headers: [String: String]
        public var source: KafkaCoordinates
    }

    /// The outbox row's id: publish in this order per source partition.
    public var id: Int64
    public var stream: OutboxStream
    /// The Kafka key to publish with: the originalTransactionId, or the raw message's key for dead letters.
    public var key: String?
    public var payload: Payload
}
