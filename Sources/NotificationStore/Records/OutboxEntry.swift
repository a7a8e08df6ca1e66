#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row of `outbox`: an event for an output topic, written in the same transaction as the fact it announces,
/// so that a crash between the database commit and the publish loses nothing.
public struct OutboxEntry: Sendable, Hashable {
    /// The row id; ascending in write order.
    public var id: Int64
    /// Which output stream the event belongs to.
    public var stream: OutboxStream
    /// The Kafka key to publish with (the originalTransactionId, or the raw message's key for dead letters).
    public var messageKey: String?
    /// The notification announced (``OutboxStream/decoded``) or that changed the state
    /// (``OutboxStream/subscriptionState``).
    public var notificationUUID: UUID?
    /// The `rejected_notifications` row (``OutboxStream/deadLetter``).
    public var rejectedID: Int64?
    /// The state after the change (``OutboxStream/subscriptionState``).
    public var subscriptionState: SubscriptionState?
    /// The raw-topic partition the event came from: the worker owning it publishes the event.
    public var source: KafkaPartitionReference
    /// The row's `subscription_state` as PostgreSQL writes it out (``OutboxStream/subscriptionState``): the value
    /// published, byte for byte the one a read of the outbox gives.
    var subscriptionStateJSON: String?

    /// Creates an entry.
    public init(
        id: Int64,
        stream: OutboxStream,
        messageKey: String?,
        notificationUUID: UUID? = nil,
        rejectedID: Int64? = nil,
        subscriptionState: SubscriptionState? = nil,
        source: KafkaPartitionReference
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
public struct OutboxStream: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The name stored in `outbox.stream`.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// A new (non-duplicate) verified notification.
    public static let decoded = OutboxStream(rawValue: "decoded")
    /// A subscription's state after a change the last-writer-wins guard accepted.
    public static let subscriptionState = OutboxStream(rawValue: "subscription_state")
    /// A newly rejected body.
    public static let deadLetter = OutboxStream(rawValue: "dead_letter")
}

/// A topic partition.
public struct KafkaPartitionReference: Sendable, Hashable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)/\(partition)" }
}
