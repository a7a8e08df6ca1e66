#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row of `subscriptions` as the API answers it: its access at the moment of the read, what that is judged from,
/// and the row as the state topic carries it.
package struct SubscriptionRow: Sendable, Hashable {
    /// The columns as `StateReader` selects them.
    typealias Columns = (String, Bool?, Date?, Bool, String)

    package var originalTransactionId: String
    /// `entitled`: nil when Apple's fields do not say.
    package var entitled: Bool?
    /// `entitled_until`: nil with `entitled` true is access with no end.
    package var entitledUntil: Date?
    /// Whether it gives access at the read's instant: Docs/entitlement.md's `has_access`, judged by PostgreSQL with
    /// the view `subscription_access`'s rule (`SubscriptionStateRules.access(at:row:)`).
    package var hasAccess: Bool
    /// The row as `to_jsonb(row)` writes it: the value of the subscription's latest state event.
    package var stateJSON: String

    package init(
        originalTransactionId: String,
        entitled: Bool?,
        entitledUntil: Date?,
        hasAccess: Bool,
        stateJSON: String
    ) {
        self.originalTransactionId = originalTransactionId
        self.entitled = entitled
        self.entitledUntil = entitledUntil
        self.hasAccess = hasAccess
        self.stateJSON = stateJSON
    }

    init(_ columns: Columns) {
        self.init(
            originalTransactionId: columns.0,
            entitled: columns.1,
            entitledUntil: columns.2,
            hasAccess: columns.3,
            stateJSON: columns.4
        )
    }
}

/// A customer's purchases in one app and environment, and their access per subscription group.
package struct CustomerRows: Sendable, Hashable {
    /// Access in one subscription group: any of the customer's subscriptions there gives it.
    package struct Group: Sendable, Hashable {
        package var subscriptionGroupIdentifier: String
        package var hasAccess: Bool
        /// The latest end of access among the subscriptions giving it; nil when none does or one gives it with no
        /// end.
        package var entitledUntil: Date?
        package var entitledOriginalTransactionIds: [String]
        package var originalTransactionIds: [String]

        package init(
            subscriptionGroupIdentifier: String,
            hasAccess: Bool,
            entitledUntil: Date?,
            entitledOriginalTransactionIds: [String],
            originalTransactionIds: [String]
        ) {
            self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
            self.hasAccess = hasAccess
            self.entitledUntil = entitledUntil
            self.entitledOriginalTransactionIds = entitledOriginalTransactionIds
            self.originalTransactionIds = originalTransactionIds
        }
    }

    /// Subscriptions and one-time purchases, by original transaction id; at most the API's
    /// ``ReadAPIConfiguration/maximumCustomerPurchases``.
    package var purchases: [SubscriptionRow]
    /// How many there are in all.
    package var total: Int
    /// Whether any of all of them gives access now.
    package var hasAccess: Bool
    /// By subscription group identifier, counting all purchases.
    package var groups: [Group]

    package init(purchases: [SubscriptionRow], total: Int, hasAccess: Bool, groups: [Group]) {
        self.purchases = purchases
        self.total = total
        self.hasAccess = hasAccess
        self.groups = groups
    }
}

/// One page of a subscription's notifications, newest first.
package struct NotificationPage: Sendable, Hashable {
    /// Each notification as the API answers it (JSON built by PostgreSQL), newest first.
    package var notifications: [String]
    /// Where the page after (older) starts; nil at the end.
    package var next: NotificationCursor?
    /// Where the page before (newer) ends; nil at the start.
    package var previous: NotificationCursor?

    package init(notifications: [String], next: NotificationCursor?, previous: NotificationCursor?) {
        self.notifications = notifications
        self.next = next
        self.previous = previous
    }
}
