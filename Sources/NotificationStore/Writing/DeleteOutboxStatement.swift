import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Deletes published outbox rows (``NotificationStore/deleteOutbox(_:states:)``) as a named prepared statement: it
/// runs after every batch, and parsing and planning it each time cost the server more than deleting the rows.
struct DeleteOutboxStatement: PostgresPreparedStatement {
    static let name = "asnp_delete_outbox"
    /// `ids` as they are; each state row only if its subscription still has the state it published. Returns the
    /// state rows kept because their subscription changed meanwhile.
    static let sql = """
        WITH published AS (
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::uuid[]) AS published(id, key, version)
        ), changed AS (
            SELECT published.* FROM published
            JOIN subscriptions s ON s.original_transaction_id = published.key
            WHERE s.last_notification_uuid <> published.version
        ), deleted AS (
            -- One array, so that the delete is index lookups by id like a plain one.
            DELETE FROM outbox
            WHERE id = ANY($4::bigint[] || ARRAY(SELECT id FROM published EXCEPT SELECT id FROM changed))
        )
        SELECT id, key, version FROM changed
        """

    typealias Row = PostgresRow

    var ids: [Int64]
    var states: [OutboxMessage.PublishedState]

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(states.map(\.id))
        bindings.append(states.map(\.key))
        bindings.append(states.map(\.version))
        bindings.append(ids)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
