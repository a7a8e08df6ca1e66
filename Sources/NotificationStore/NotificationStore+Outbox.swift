import AppStoreModels
import KafkaClient
import Logging
import NotificationBodies
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// The outbox rows written for batches of `source` (a raw-topic partition) and not set aside, oldest first,
    /// with their payloads; at most `limit`. Publish them in this order, then ``deleteOutbox(_:states:)`` the acknowledged
    /// ones.
    ///
    /// A `subscription_state` row comes with its subscription's current state, not the state its change left: rows
    /// of one subscription may be published by two members in either order (a partition handed over, partitions
    /// added), and the compacted state topic must end on the current state whichever comes last.
    package func pendingOutbox(
        source: KafkaTopicPartition,
        limit: Int = 1_000
    ) async throws(NotificationStoreError) -> [OutboxMessage] {
        let logger = self.logger
        return try await withConnection("reading the outbox of \(source)") { [self] connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: OutboxMessage.pendingColumns)
                FROM outbox o
                LEFT JOIN notifications n ON o.stream = 'decoded' AND n.notification_uuid = o.notification_uuid
                LEFT JOIN notification_bodies b
                    ON b.notification_uuid = n.notification_uuid AND b.received_at = n.received_at
                LEFT JOIN rejected_notifications r ON o.stream = 'dead_letter' AND r.id = o.rejected_id
                LEFT JOIN subscriptions s
                    ON o.stream = 'subscription_state' AND s.original_transaction_id = o.message_key
                WHERE o.source_topic = \(source.topic) AND o.source_partition = \(Int32(source.partition))
                    AND o.refused_at IS NULL
                ORDER BY o.id
                LIMIT \(limit)
                """,
                logger: logger
            )
            var messages: [OutboxMessage] = []
            // Packed bodies, rebuilt after the rows are read (their headers may need a query): by index.
            var packed: [(index: Int, form: [UInt8])] = []
            for try await row in rows {
                let (message, body) = try OutboxMessage.pending(row.makeRandomAccess())
                if let body { packed.append((messages.count, body)) }
                messages.append(message)
            }
            // Rows whose JSON this version cannot build from their bodies (stored by an earlier one, or a body it
            // cannot rebuild): by index.
            var unbuilt: [Int: UUID] = [:]
            let bodies = try await unpack(packed.map(\.form), on: connection)
            for ((index, _), body) in zip(packed, bodies) {
                switch messages[index].payload {
                case .decoded(var event):
                    let json = (try? body.get()).flatMap {
                        DecodedNotificationJSON.rebuilt(version: event.version, storedBody: $0)
                    }
                    guard let json else {
                        unbuilt[index] = event.notificationUUID
                        continue
                    }
                    event.json = json
                    messages[index].payload = .decoded(event)
                case .deadLetter(var letter):
                    do {
                        letter.body = try body.get()
                        messages[index].payload = .deadLetter(letter)
                    } catch {
                        messages[index].payload = .unpublishable(
                            reason: "its rejected body cannot be rebuilt: \(error)"
                        )
                    }
                default:
                    break
                }
            }
            for (index, message) in messages.enumerated() {
                if case .decoded(let event) = message.payload, event.json.isEmpty, unbuilt[index] == nil {
                    // Neither a body nor a packed form: past retention, or never stored.
                    unbuilt[index] = event.notificationUUID
                }
            }
            guard !unbuilt.isEmpty else { return messages }
            let stored = try await Self.storedDecodedJSON(Array(unbuilt.values), connection: connection, logger: logger)
            for (index, uuid) in unbuilt {
                guard case .decoded(var event) = messages[index].payload else { continue }
                if let json = stored[uuid] {
                    event.json = json
                    messages[index].payload = .decoded(event)
                } else {
                    messages[index].payload = .unpublishable(
                        reason: "the notification's body and decoded JSON are gone (its month of bodies dropped)"
                    )
                }
            }
            return messages
        }
    }

    /// The stored decoded JSON of notifications whose JSON this version cannot build from their bodies.
    private static func storedDecodedJSON(
        _ uuids: [UUID],
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [UUID: String] {
        let rows = try await connection.query(
            """
            SELECT notification_uuid, decoded::text FROM notifications_decoded
            WHERE notification_uuid = ANY(\(uuids)) AND decoded IS NOT NULL
            """,
            logger: logger
        )
        var json: [UUID: String] = [:]
        for try await (uuid, text) in rows.decode((UUID, String).self) { json[uuid] = text }
        return json
    }

    /// The current state of each subscription in `keys` (original transaction ids) that has one, as a
    /// `subscription_state` row of the outbox publishes it.
    package func subscriptionStates(
        _ keys: [String]
    ) async throws(NotificationStoreError) -> [String: OutboxMessage.StateEvent] {
        guard !keys.isEmpty else { return [:] }
        let logger = self.logger
        return try await withConnection("reading \(keys.count) subscription states") { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: OutboxMessage.StateEvent.columns(of: "s"))
                FROM subscriptions s WHERE s.original_transaction_id = ANY(\(keys))
                """,
                logger: logger
            )
            var states: [String: OutboxMessage.StateEvent] = [:]
            for try await row in rows {
                if let state = try OutboxMessage.StateEvent(row.makeRandomAccess()) {
                    states[state.originalTransactionID] = state
                }
            }
            return states
        }
    }

    /// Which of `partitions` of `topic` have outbox rows to publish (not set aside).
    package func partitionsWithPendingOutbox(
        topic: String,
        partitions: [Int32]
    ) async throws(NotificationStoreError) -> [Int32] {
        guard !partitions.isEmpty else { return [] }
        let logger = self.logger
        return try await withConnection("looking for outbox rows of \(topic)") { connection in
            let rows = try await connection.query(
                """
                SELECT p FROM unnest(\(partitions)::integer[]) AS p
                WHERE EXISTS (
                    SELECT 1 FROM outbox
                    WHERE source_topic = \(topic) AND source_partition = p AND refused_at IS NULL
                )
                ORDER BY p
                """,
                logger: logger
            )
            var found: [Int32] = []
            for try await partition in rows.decode(Int32.self) { found.append(partition) }
            return found
        }
    }

    /// Sets outbox rows aside that the broker refused for good, with why: they are no longer read by
    /// ``pendingOutbox(source:limit:)`` until an operator clears `refused_at` (Docs/runbook.md).
    package func setOutboxAside(_ refusals: [(id: Int64, reason: String)]) async throws(NotificationStoreError) {
        guard !refusals.isEmpty else { return }
        let logger = self.logger
        let ids = refusals.map(\.id)
        let reasons = refusals.map(\.reason)
        _ = try await withConnection("setting \(refusals.count) refused outbox rows aside") { connection in
            try await connection.query(
                """
                UPDATE outbox SET refused_at = now(), refusal = refused.reason
                FROM unnest(\(ids)::bigint[], \(reasons)::text[]) AS refused(id, reason)
                WHERE outbox.id = refused.id
                """,
                logger: logger
            )
        }
    }

    /// Deletes published outbox rows: `ids` as they are, and each `subscription_state` row in `states` only if the
    /// state it published is still its subscription's current one (or the subscription is gone), in one statement.
    /// Returns the state rows left because their subscription changed meanwhile: publish its current state again.
    ///
    /// Planned for each call, not prepared: the generic plan PostgreSQL settles on after a prepared statement's fifth
    /// run, while `subscriptions` and `outbox` are still small, scans both whole, and kept doing so as they grew
    /// (1.5 ms a call in `asnp-bench e2e`, against 0.85 ms parsed and planned each time).
    @discardableResult
    package func deleteOutbox(
        _ ids: [Int64],
        states: [OutboxMessage.PublishedState] = []
    ) async throws(NotificationStoreError) -> [OutboxMessage.PublishedState] {
        guard !ids.isEmpty || !states.isEmpty else { return [] }
        let logger = self.logger
        let stateIDs = states.map(\.id)
        let keys = states.map(\.key)
        let versions = states.map(\.version)
        return try await withConnection("deleting \(ids.count + states.count) published outbox rows") { connection in
            let rows = try await connection.query(
                """
                WITH published AS (
                    SELECT * FROM unnest(\(stateIDs)::bigint[], \(keys)::text[], \(versions)::bigint[])
                        AS published(id, key, version)
                ), changed AS (
                    SELECT published.* FROM published
                    JOIN subscriptions s ON s.original_transaction_id = published.key
                    WHERE \(unescaped: BatchStatements.stateVersion("s")) <> published.version
                ), deleted AS (
                    -- One array, so that the delete is index lookups by id like a plain one.
                    DELETE FROM outbox
                    WHERE id = ANY(\(ids)::bigint[] || ARRAY(SELECT id FROM published EXCEPT SELECT id FROM changed))
                )
                SELECT id, key, version FROM changed
                """,
                logger: logger
            )
            var changed: [OutboxMessage.PublishedState] = []
            for try await (id, key, version) in rows.decode((Int64, String, Int64).self) {
                changed.append(OutboxMessage.PublishedState(id: id, key: key, version: version))
            }
            return changed
        }
    }

    /// How many outbox rows wait to be published, how many are set aside, all partitions, and the age in seconds of
    /// the oldest waiting (0 when none; by the database's clock, as the rows' `created_at`): gauges for monitoring. A
    /// growing outbox, or an old row in it, means the output topics do not take events; set-aside rows need an
    /// operator.
    package func outboxRowCounts() async throws(NotificationStoreError) -> (
        pending: Int, refused: Int, oldestPendingAge: Double
    ) {
        let logger = self.logger
        return try await withConnection("counting outbox rows") { connection in
            let rows = try await connection.query(
                """
                SELECT count(*) FILTER (WHERE refused_at IS NULL), count(refused_at),
                    COALESCE(extract(epoch FROM clock_timestamp() - min(created_at) FILTER (WHERE refused_at IS NULL)),
                        0)::float8
                FROM outbox
                """,
                logger: logger
            )
            for try await counts in rows.decode((Int, Int, Double).self) { return (counts.0, counts.1, counts.2) }
            return (0, 0, 0)
        }
    }
}

extension OutboxMessage {
    /// The columns ``pending(_:)`` reads, by name: the outbox row's, then those of the notification (`n`, its body
    /// `b`), the subscription (`s`) or the rejected body (`r`) its stream joins, NULL for the other streams.
    ///
    /// `signed_date` reads back as the milliseconds since 1970 it was written from (the inverse of
    /// `BatchStatements.timestamp(_:)`), so that a decoded event read here is the one the write returned.
    fileprivate static let pendingColumns = """
        o.id, o.stream, o.message_key, o.trace_parent, o.trace_state, o.created_at,
        n.notification_uuid, n.version, n.notification_type, n.subtype,
        (extract(epoch FROM n.signed_date) * 1000)::bigint AS signed_date, n.environment, n.bundle_id,
        n.original_transaction_id, n.legacy_raw_body, b.body AS packed_body,
        \(StateEvent.columns(of: "s")),
        r.status AS rejected_status, r.reason AS rejected_reason, r.legacy_raw_body AS rejected_legacy_raw_body,
        r.body AS rejected_packed_body, r.headers::text AS rejected_headers, r.received_at AS rejected_received_at,
        r.kafka_topic AS rejected_topic, r.kafka_partition AS rejected_partition, r.kafka_offset AS rejected_offset
        """

    /// The message of a row of ``pendingColumns``, and the packed form of the body its decoded JSON or dead letter
    /// is to be rebuilt from (until then the JSON, or the letter's body, is empty).
    fileprivate static func pending(
        _ row: PostgresRandomAccessRow
    ) throws -> (message: OutboxMessage, packedBody: [UInt8]?) {
        let stream = OutboxStream(rawValue: try row["stream"].decode(String.self))
        var payload = Payload.missing
        var packedBody: [UInt8]?
        switch stream {
        case .decoded:
            if let uuid = try row["notification_uuid"].decode(UUID?.self) {
                // Built from the body later, exactly as when the batch was stored and first published.
                if let body = try row["legacy_raw_body"].decode(String?.self) {
                    packedBody = [PackedBody.Format.verbatim.rawValue] + Array(body.utf8)
                } else if let form = try row["packed_body"].decode(ByteBuffer?.self) {
                    packedBody = Array(form.readableBytesView)
                }
                payload = .decoded(
                    DecodedEvent(
                        notificationUUID: uuid,
                        version: Int(try row["version"].decode(Int16.self)),
                        notificationType: try row["notification_type"].decode(String.self),
                        subtype: try row["subtype"].decode(String?.self),
                        signedDate: try row["signed_date"].decode(Int64?.self),
                        environment: try row["environment"].decode(String?.self),
                        bundleID: try row["bundle_id"].decode(String?.self),
                        originalTransactionID: try row["original_transaction_id"].decode(String?.self),
                        json: ""
                    )
                )
            }
        case .subscriptionState:
            if let state = try StateEvent(row) { payload = .subscriptionState(state) }
        case .deadLetter:
            if let status = try row["rejected_status"].decode(String?.self) {
                if let body = try row["rejected_legacy_raw_body"].decode(ByteBuffer?.self) {
                    packedBody = [PackedBody.Format.verbatim.rawValue] + body.readableBytesView
                } else if let form = try row["rejected_packed_body"].decode(ByteBuffer?.self) {
                    packedBody = Array(form.readableBytesView)
                }
                let headersJSON = try row["rejected_headers"].decode(String?.self) ?? "{}"
                payload = .deadLetter(
                    DeadLetter(
                        status: status,
                        reason: try row["rejected_reason"].decode(String.self),
                        body: [],
                        receivedAt: try row["rejected_received_at"].decode(Date.self),
                        headers: (try? JSONDecoder().decode([String: String].self, from: Data(headersJSON.utf8)))
                            ?? [:],
                        source: KafkaTopicPartitionOffset(
                            topic: try row["rejected_topic"].decode(String.self),
                            partition: try row["rejected_partition"].decode(Int32.self),
                            offset: try row["rejected_offset"].decode(Int64.self)
                        )
                    )
                )
            }
        default:
            break
        }
        let message = OutboxMessage(
            id: try row["id"].decode(Int64.self),
            stream: stream,
            key: try row["message_key"].decode(String?.self),
            payload: payload,
            traceContext: TraceContext(
                traceparent: try row["trace_parent"].decode(String?.self),
                tracestate: try row["trace_state"].decode(String?.self)
            ),
            storedAt: try row["created_at"].decode(Date.self)
        )
        return (message, packedBody)
    }
}

extension OutboxMessage.StateEvent {
    /// The columns of the `subscriptions` row `row` (a table alias) that ``init(_:)`` reads, by name: the row as the
    /// outbox publishes it.
    fileprivate static func columns(of row: String) -> String {
        """
        to_jsonb(\(row))::text AS state_json, \(row).original_transaction_id AS state_original_transaction_id,
        \(row).last_notification_uuid AS state_last_notification_uuid,
        \(row).last_signed_date AS state_last_signed_date, \(row).environment AS state_environment,
        \(row).bundle_id AS state_bundle_id, \(BatchStatements.stateVersion(row)) AS state_version
        """
    }

    /// The state in a row with ``columns(of:)``; nil when it has none (a subscription deleted since).
    fileprivate init?(_ row: PostgresRandomAccessRow) throws {
        guard let json = try row["state_json"].decode(String?.self),
            let uuid = try row["state_last_notification_uuid"].decode(UUID?.self),
            let version = try row["state_version"].decode(Int64?.self)
        else { return nil }
        self.init(
            json: json,
            originalTransactionID: try row["state_original_transaction_id"].decode(String.self),
            lastNotificationUUID: uuid,
            lastSignedDate: try row["state_last_signed_date"].decode(Date.self),
            environment: try row["state_environment"].decode(String?.self),
            bundleID: try row["state_bundle_id"].decode(String?.self),
            version: version
        )
    }
}
