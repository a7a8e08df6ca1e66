#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a batch write did.
package struct BatchWriteResult: Sendable, Hashable {
    /// Verified notifications stored for the first time, in batch order.
    package var storedNotifications: [UUID] = []
    /// Verified entries that were already stored (earlier, or earlier in the same batch).
    package var duplicateNotifications = 0
    /// Rejected bodies stored for the first time (including ``unstorableNotifications``).
    package var storedRejections = 0
    /// Rejected entries already stored from the same Kafka coordinates (a redelivery).
    package var duplicateRejections = 0
    /// Verified notifications that could not be stored as such (a value PostgreSQL cannot hold, a constraint)
    /// and were stored as rejected with status `UNSTORABLE` instead.
    package var unstorableNotifications = 0
    /// Subscriptions whose state this batch changed (``SubscriptionStateRules``: some part of it was newer).
    package var subscriptionChanges: [SubscriptionState] = []
    /// The outbox rows written, in id order: what the worker publishes after the commit.
    package var outbox: [OutboxEntry] = []
    /// The messages of ``outbox``, made from the batch in memory rather than read back from the table: publish
    /// them in this order, then ``NotificationStore/deleteOutbox(_:states:)`` their ids. Nil when some of them must be read
    /// with ``NotificationStore/pendingOutbox(source:limit:)`` (the batch stored dead letters, or was written row
    /// by row).
    package var outboxMessages: [OutboxMessage]?

    package init() {}
}
