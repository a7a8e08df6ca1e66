import KafkaClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An outbox row with what it publishes, as typed values: from the rows a batch's write just stored
/// (``BatchWriteResult/outboxMessages``) or read from the table by ``NotificationStore/pendingOutbox(source:limit:)``,
/// equal either way; the worker builds the output event from them alike. Deleted by
/// ``NotificationStore/deleteOutbox(_:states:)`` once the broker acknowledged the event.
package struct OutboxMessage: Sendable, Hashable {
    /// What a row publishes, by stream.
    package enum Payload: Sendable, Hashable {
        /// A new notification: its `decoded` JSON and the facts its event headers carry.
        case decoded(DecodedEvent)
        /// A subscription's state (`SubscriptionState`): as the batch's change left it when the write returned it,
        /// the row's current state when read from the outbox.
        case subscriptionState(StateEvent)
        /// A rejected body, as stored (V1 passwords redacted), with why and where it came from.
        case deadLetter(DeadLetter)
        /// The notification or rejected row it referred to is gone (deleted by an operator): nothing to publish.
        case missing
        /// Its event cannot be built (a notification whose body and decoded JSON are gone, a rejected body that
        /// cannot be rebuilt), for this reason: set the row aside, never delete it unpublished.
        case unpublishable(reason: String)
    }

    /// A `decoded` row: the notification's columns its event's headers carry, and its JSON.
    package struct DecodedEvent: Sendable, Hashable {
        package var notificationUUID: UUID
        /// The notification format: 1 or 2.
        package var version: Int
        package var notificationType: String
        package var subtype: String?
        /// V2's `signedDate` in milliseconds since 1970, the integer the worker read from the payload: what the
        /// `signed_date` column stores exactly and reads back as (``NotificationStore/pendingOutbox(source:limit:)``),
        /// so that an event built from the batch just written and one built from the table are the same.
        package var signedDate: Int64?
        /// Apple's spelling: `Production`, `Sandbox`; nil when the notification does not say.
        package var environment: String?
        package var bundleID: String?
        package var originalTransactionID: String?
        /// The `decoded` column: the notification with its transaction and renewal info decoded.
        package var json: String
    }

    /// A `subscription_state` row: the `subscriptions` row's columns its event's headers carry, and the row as JSON.
    package struct StateEvent: Sendable, Hashable {
        /// The `subscriptions` row as JSON.
        package var json: String
        /// The subscription (the event's key).
        package var originalTransactionID: String
        /// `last_notification_uuid`: the newest notification merged into the state.
        package var lastNotificationUUID: UUID
        /// `last_signed_date`, as postgres-nio decodes the column whichever way the row is read.
        package var lastSignedDate: Date
        package var environment: String?
        package var bundleID: String?

        /// Which version of the row the state is: its `updated_at` in microseconds since 1970, which every change
        /// of the row moves (its `last_notification_uuid` does not: a late notification about a later purchase
        /// changes the row and leaves the newest notification as it was).
        package var version: Int64
    }

    /// A `subscription_state` row whose event went out, with the state it carried (see
    /// ``NotificationStore/deleteOutbox(_:states:)``).
    package struct PublishedState: Sendable, Hashable {
        package var id: Int64
        package var key: String
        /// ``StateEvent/version`` of the state published.
        package var version: Int64

        package init(id: Int64, key: String, version: Int64) {
            self.id = id
            self.key = key
            self.version = version
        }
    }

    package struct DeadLetter: Sendable, Hashable {
        package var status: String
        package var reason: String
        package var body: [UInt8]
        package var receivedAt: Date
        /// The consumed message's headers.
        package var headers: [String: String]
        package var source: KafkaTopicPartitionOffset
    }

    /// The outbox row's id: publish in this order per source partition.
    package var id: Int64
    package var stream: OutboxStream
    /// The Kafka key to publish with: the originalTransactionId, or the raw message's key for dead letters.
    package var key: String?
    package var payload: Payload
    /// The trace its notification or rejected body arrived in (the `outbox` row's `trace_parent`, `trace_state`).
    package var traceContext: TraceContext?
    /// When the row was stored: the commit, as the writer's clock read it after, for a row the write returned; the
    /// row's `created_at` (its transaction's start, by the database's clock) for one read back.
    package var storedAt: Date

    /// Creates a message.
    package init(
        id: Int64,
        stream: OutboxStream,
        key: String?,
        payload: Payload,
        traceContext: TraceContext? = nil,
        storedAt: Date = Date(timeIntervalSince1970: 0)
    ) {
        self.id = id
        self.stream = stream
        self.key = key
        self.payload = payload
        self.traceContext = traceContext
        self.storedAt = storedAt
    }
}
