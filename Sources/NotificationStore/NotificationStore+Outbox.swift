import KafkaClient
import Logging
import PipelineContract
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// The outbox rows written for batches of `source` (a raw-topic partition), oldest first, with their payloads;
    /// at most `limit`. Publish them in this order, then ``deleteOutbox(_:)`` the acknowledged ones.
    package func pendingOutbox(
        source: KafkaTopicPartition,
        limit: Int = 1_000
    ) async throws(NotificationStoreError) -> [OutboxMessage] {
        let logger = self.logger
        return try await withConnection("reading the outbox of \(source)") { connection in
            let rows = try await connection.query(
                """
                SELECT o.id, o.stream, o.message_key, o.subscription_state::text,
                    n.notification_uuid, n.notification_type, n.subtype, n.signed_date, n.environment, n.bundle_id,
                    n.original_transaction_id, n.decoded::text,
                    r.status, r.reason, r.raw_body, r.headers::text, r.kafka_topic, r.kafka_partition, r.kafka_offset
                FROM outbox o
                LEFT JOIN notifications n ON o.stream = 'decoded' AND n.notification_uuid = o.notification_uuid
                LEFT JOIN rejected_notifications r ON o.stream = 'dead_letter' AND r.id = o.rejected_id
                WHERE o.source_topic = \(source.topic) AND o.source_partition = \(Int32(source.partition))
                ORDER BY o.id
                LIMIT \(limit)
                """,
                logger: logger
            )
            var messages: [OutboxMessage] = []
            for try await row in rows {
                let cells = row.makeRandomAccess()
                let stream = OutboxStream(rawValue: try cells[1].decode(String.self))
                var payload = OutboxMessage.Payload.missing
                switch stream {
                case .decoded:
                    if let uuid = try cells[4].decode(UUID?.self), let json = try cells[11].decode(String?.self) {
                        payload = .decoded(
                            OutboxMessage.DecodedEvent(
                                attributes: OutputEvent.DecodedAttributes(
                                    notificationUUID: uuid,
                                    notificationType: try cells[5].decode(String.self),
                                    subtype: try cells[6].decode(String?.self),
                                    signedDate: try cells[7].decode(Date?.self),
                                    environment: try cells[8].decode(String?.self),
                                    bundleID: try cells[9].decode(String?.self),
                                    originalTransactionID: try cells[10].decode(String?.self)
                                ),
                                json: json
                            )
                        )
                    }
                case .subscriptionState:
                    if let json = try cells[3].decode(String?.self) { payload = .subscriptionState(json: json) }
                case .deadLetter:
                    if let status = try cells[12].decode(String?.self),
                        let body = try cells[14].decode(ByteBuffer?.self)
                    {
                        let headersJSON = try cells[15].decode(String?.self) ?? "{}"
                        let headers =
                            (try? JSONDecoder().decode([String: String].self, from: Data(headersJSON.utf8))) ?? [:]
                        payload = .deadLetter(
                            OutboxMessage.DeadLetter(
                                status: status,
                                reason: try cells[13].decode(String.self),
                                body: Array(body.readableBytesView),
                                headers: headers,
                                source: KafkaTopicPartitionOffset(
                                    topic: try cells[16].decode(String.self),
                                    partition: try cells[17].decode(Int32.self),
                                    offset: try cells[18].decode(Int64.self)
                                )
                            )
                        )
                    }
                default:
                    break
                }
                messages.append(
                    OutboxMessage(
                        id: try cells[0].decode(Int64.self),
                        stream: stream,
                        key: try cells[2].decode(String?.self),
                        payload: payload
                    )
                )
            }
            return messages
        }
    }

    /// Deletes published outbox rows.
    package func deleteOutbox(_ ids: [Int64]) async throws(NotificationStoreError) {
        guard !ids.isEmpty else { return }
        let logger = self.logger
        _ = try await withConnection("deleting \(ids.count) published outbox rows") { connection in
            try await connection.query("DELETE FROM outbox WHERE id = ANY(\(ids))", logger: logger)
        }
    }

    /// How many outbox rows wait to be published, all partitions (a gauge for monitoring: a growing outbox means
    /// the output topics do not take events).
    package func outboxRowCount() async throws(NotificationStoreError) -> Int {
        let logger = self.logger
        return try await withConnection("counting outbox rows") { connection in
            let rows = try await connection.query("SELECT count(*) FROM outbox", logger: logger)
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
    }
}
