#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON of each answer (Docs/contract/openapi.yaml). Access was judged at the read, whose moment the answer's
/// `Date` header gives: not in the body, so that an unchanged answer keeps its entity tag.
enum ResponseBodies {
    /// A subscription or one-time purchase: its access now, and its row as the state topic carries it (`state`).
    static func subscription(_ row: SubscriptionRow, scope: APIScope) -> [UInt8] {
        var writer = JSONWriter()
        write(row, scope: scope, into: &writer)
        return writer.finished()
    }

    private static func write(_ row: SubscriptionRow, scope: APIScope, into writer: inout JSONWriter) {
        writer.string("original_transaction_id", row.originalTransactionId)
        writer.string("bundle_id", scope.bundleId)
        writer.string("environment", scope.environment)
        writer.bool("has_access", row.hasAccess)
        writer.bool("entitled", row.entitled)
        writer.date("entitled_until", row.entitledUntil)
        writer.raw("state", row.stateJSON.utf8)
    }

    /// A customer: access overall and per subscription group, then each purchase as ``subscription(_:scope:)``.
    static func customer(_ customer: CustomerRows, token: UUID, scope: APIScope) -> [UInt8] {
        var writer = JSONWriter()
        writer.string("app_account_token", token.uuidString.lowercased())
        writer.string("bundle_id", scope.bundleId)
        writer.string("environment", scope.environment)
        writer.bool("has_access", customer.hasAccess)
        let groups = customer.groups.map { group in
            var writer = JSONWriter()
            writer.string("subscription_group_identifier", group.subscriptionGroupIdentifier)
            writer.bool("has_access", group.hasAccess)
            writer.date("entitled_until", group.entitledUntil)
            writer.strings("entitled_original_transaction_ids", group.entitledOriginalTransactionIds)
            writer.strings("original_transaction_ids", group.originalTransactionIds)
            return writer.finished()
        }
        writer.rawArray("subscription_groups", groups)
        writer.int("purchases_total", customer.total)
        let purchases = customer.purchases.map { row in
            var writer = JSONWriter()
            write(row, scope: scope, into: &writer)
            return writer.finished()
        }
        writer.rawArray("purchases", purchases)
        return writer.finished()
    }

    /// A page of notifications, with the cursors of the pages beside it.
    static func notifications(_ page: NotificationPage, of originalTransactionId: String, scope: APIScope) -> [UInt8] {
        var writer = JSONWriter()
        writer.string("original_transaction_id", originalTransactionId)
        writer.string("bundle_id", scope.bundleId)
        writer.string("environment", scope.environment)
        writer.rawArray("notifications", page.notifications.map(\.utf8))
        writer.string("next_cursor", page.next?.text)
        writer.string("previous_cursor", page.previous?.text)
        return writer.finished()
    }
}
