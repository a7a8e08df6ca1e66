import KafkaClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row of `outbox`: an event for an output topic, written in the same transaction as the fact it announces,
/// so that a crash between the database commit and the publish loses nothing.
package struct OutboxEntry: Sendable, Hashable {
    /// The row id; ascending in write order.
    package var id: Int64
    /// Which output stream the event belongs to.
    package var stream: OutboxStream
    /// The Kafka key to publish with (the originalTransactionId, or the raw message's key for dead letters).
    package var messageKey: String?
    /// The notification announced (``OutboxStream/decoded``) or that changed the state
    /// (``OutboxStream/subscriptionState``).
    package var notificationUUID: UUID?
    /// The `rejected_notifications` row (``OutboxStream/deadLetter``).
    package var rejectedID: Int64?
    /// The state after the change (``OutboxStream/subscriptionState``).
    package var subscriptionState: SubscriptionState?
    /// The raw-topic partition the event came from: the worker owning it publishes the event.
    package var source: KafkaTopicPartition
    /// The row's `subscription_state` as PostgreSQL writes it out (``OutboxStream/subscriptionState``): the value
    /// published, byte for byte the one a read of the outbox gives.
    var subscriptionStateJSON: String?
    /// The state's version (``OutboxMessage/StateEvent/version``).
    var subscriptionStateVersion: Int64?
    /// The trace its notification or rejected body arrived in.
    var traceContext: TraceContext?

    /// Creates an entry.
    package init(
        id: Int64,
        stream: OutboxStream,
        messageKey: String?,
        notificationUUID: UUID? = nil,
        rejectedID: Int64? = nil,
        subscriptionState: SubscriptionState? = nil,
        source: KafkaTopicPartition
    ) {
        self.id = id
        self.stream = stream
        self.messageKey = messageKey
        self.notificationUUID = notificationUUID
        self.rejectedID = rejectedID
        self.subscriptionState = subscriptionState
        self.source = source
    }
}

/// An output stream of the outbox.
package struct OutboxStream: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The name stored in `outbox.stream`.
    package let rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    /// A new (non-duplicate) verified notification.
    package static let decoded = OutboxStream(rawValue: "decoded")
    /// A subscription's state after a change of its row (``SubscriptionStateRules``).
    package static let subscriptionState = OutboxStream(rawValue: "subscription_state")
    /// A newly rejected body.
    package static let deadLetter = OutboxStream(rawValue: "dead_letter")
}
