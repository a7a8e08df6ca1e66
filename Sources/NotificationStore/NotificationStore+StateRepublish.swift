import Logging
import PostgresNIO

extension NotificationStore {
    /// What ``republishStates(keys:)`` queued: outbox ids `firstID...lastID`, `count` rows.
    package struct StateRepublication: Sendable, Hashable {
        package var count: Int
        package var firstID: Int64?
        package var lastID: Int64?
    }

    /// Queues a state event for every subscription (or those of `keys`) in the outbox, to re-seed the compacted state
    /// topic from `subscriptions`: after the topic was lost or emptied, or for a consumer that needs every state.
    ///
    /// The workers publish them as any state event (each by the worker owning its newest notification's raw-topic
    /// partition, the row as it is when sent), so a republished state never lands after a newer one.
    package func republishStates(keys: [String]? = nil) async throws(NotificationStoreError) -> StateRepublication {
        let logger = self.logger
        return try await withConnection("queueing subscription states to publish again") { connection in
            let rows = try await connection.query(
                """
                WITH queued AS (
                    INSERT INTO outbox (stream, message_key, notification_uuid, source_topic, source_partition)
                    SELECT 'subscription_state', s.original_transaction_id, s.last_notification_uuid, n.kafka_topic,
                        n.kafka_partition
                    FROM subscriptions s JOIN notifications n ON n.notification_uuid = s.last_notification_uuid
                    WHERE \(keys == nil) OR s.original_transaction_id = ANY(\(keys ?? []))
                    ORDER BY n.kafka_topic, n.kafka_partition, n.kafka_offset
                    RETURNING id
                )
                SELECT count(*), min(id), max(id) FROM queued
                """,
                logger: logger
            )
            for try await (count, first, last) in rows.decode((Int64, Int64?, Int64?).self) {
                return StateRepublication(count: Int(count), firstID: first, lastID: last)
            }
            return StateRepublication(count: 0)
        }
    }

    /// How many of `republication`'s state events the workers have not published yet (set-aside rows not counted:
    /// `asnp status` shows those).
    package func unpublishedStates(of republication: StateRepublication) async throws(NotificationStoreError) -> Int {
        guard let first = republication.firstID, let last = republication.lastID else { return 0 }
        let logger = self.logger
        return try await withConnection("counting subscription states still to publish") { connection in
            let rows = try await connection.query(
                """
                SELECT count(*) FROM outbox
                WHERE stream = 'subscription_state' AND id BETWEEN \(first) AND \(last) AND refused_at IS NULL
                """,
                logger: logger
            )
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }
}
