import KafkaClient
import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// Rejected notifications matching `filter` with an id above `afterID`, in id order, at most `limit`: page
    /// through them by passing the last id seen.
    ///
    /// `replayMark` is the header, and its value, that a body a replay brought was consumed with (the raw topic's
    /// `asnp-source: replay`, which PipelineContract names): unless `filter.includeReplayed`, such rows (a body
    /// rejected again after its replay) are left out.
    package func rejectedNotifications(
        _ filter: RejectedNotificationFilter,
        replayMark: (header: String, value: String),
        afterID: Int64 = 0,
        limit: Int = 500
    ) async throws(NotificationStoreError) -> [RejectedNotification] {
        let logger = self.logger
        let statuses = filter.statuses
        let ids = filter.ids
        let (sourceHeader, replaySource) = replayMark
        return try await withConnection("reading rejected notifications") { [self] connection in
            let rows = try await connection.query(
                """
                SELECT id, status, reason, legacy_raw_body, headers::text, received_at, kafka_topic, kafka_partition,
                    kafka_offset, replayed_at, body
                FROM rejected_notifications
                WHERE id > \(afterID)
                    AND (cardinality(\(statuses)::text[]) = 0 OR status = ANY(\(statuses)::text[]))
                    AND (cardinality(\(ids)::bigint[]) = 0 OR id = ANY(\(ids)::bigint[]))
                    AND (\(filter.receivedSince)::timestamptz IS NULL OR received_at >= \(filter.receivedSince))
                    AND (\(filter.receivedBefore)::timestamptz IS NULL OR received_at < \(filter.receivedBefore))
                    AND (\(filter.includeReplayed)
                        OR (replayed_at IS NULL AND headers->>\(sourceHeader) IS DISTINCT FROM \(replaySource)))
                ORDER BY id
                LIMIT \(limit)
                """,
                logger: logger
            )
            var rejected: [RejectedNotification] = []
            // Bodies stored packed (schema 6 on): rebuilt once the rows are read.
            var packed: [(index: Int, form: [UInt8])] = []
            for try await row in rows {
                let cells = row.makeRandomAccess()
                let body = try cells[3].decode(ByteBuffer?.self).map { Array($0.readableBytesView) }
                if body == nil, let form = try cells[10].decode(ByteBuffer?.self) {
                    packed.append((rejected.count, Array(form.readableBytesView)))
                }
                let headersJSON = try cells[4].decode(String.self)
                rejected.append(
                    RejectedNotification(
                        id: try cells[0].decode(Int64.self),
                        status: try cells[1].decode(String.self),
                        reason: try cells[2].decode(String.self),
                        body: body ?? [],
                        headers: (try? JSONDecoder().decode([String: String].self, from: Data(headersJSON.utf8)))
                            ?? [:],
                        receivedAt: try cells[5].decode(Date.self),
                        source: KafkaTopicPartitionOffset(
                            topic: try cells[6].decode(String.self),
                            partition: try cells[7].decode(Int32.self),
                            offset: try cells[8].decode(Int64.self)
                        ),
                        replayedAt: try cells[9].decode(Date?.self)
                    )
                )
            }
            for ((index, _), body) in zip(packed, try await unpack(packed.map(\.form), on: connection)) {
                do {
                    rejected[index].body = try body.get()
                } catch {
                    throw NotificationStoreError(
                        code: .queryFailed,
                        reason: "the body of rejected notification \(rejected[index].id) cannot be rebuilt: \(error)"
                    )
                }
            }
            return rejected
        }
    }

    /// Records that the rows' bodies are back on the raw topic.
    package func markReplayed(_ ids: [Int64]) async throws(NotificationStoreError) {
        guard !ids.isEmpty else { return }
        let logger = self.logger
        _ = try await withConnection("marking \(ids.count) rejected notifications replayed") { connection in
            try await connection.query(
                "UPDATE rejected_notifications SET replayed_at = now() WHERE id = ANY(\(ids))",
                logger: logger
            )
        }
    }
}
