import KafkaClient
import PipelineContract

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An outbox row with what it publishes: read by ``NotificationStore/pendingOutbox(source:limit:)``, deleted by
/// ``NotificationStore/deleteOutbox(_:states:)`` once the broker acknowledged it.
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

    package struct DecodedEvent: Sendable, Hashable {
        /// What the event's headers say (the notification's columns).
        package var attributes: OutputEvent.DecodedAttributes
        /// The `decoded` column: the notification with its transaction and renewal info decoded.
        package var json: String
    }

    package struct StateEvent: Sendable, Hashable {
        /// The `subscriptions` row as JSON.
        package var json: String
        /// What the event's headers say (the row's columns).
        package var attributes: OutputEvent.StateAttributes

        /// Which version of the row the state is: its `updated_at` in microseconds since 1970, which every change
        /// of the row moves (its `last_notification_uuid` does not: a late notification about a later purchase
        /// changes the row and leaves the newest notification as it was).
        package var version: Int64

        package init(json: String, attributes: OutputEvent.StateAttributes, version: Int64) {
            self.json = json
            self.attributes = attributes
            self.version = version
        }
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

    /// Creates a message.
    package init(id: Int64, stream: OutboxStream, key: String?, payload: Payload) {
        self.id = id
        self.stream = stream
        self.key = key
        self.payload = payload
    }
}
