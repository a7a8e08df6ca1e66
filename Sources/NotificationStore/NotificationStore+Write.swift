import KafkaClient
import Logging
import NIOCore
import NotificationBodies
import PostgresNIO
import PostgresRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// Writes a whole batch in one transaction: new notifications, the subscription states they advance, the
    /// rejected bodies, and an outbox row for each new fact.
    ///
    /// Idempotent: notifications dedupe on `notification_uuid` (also within the batch), rejected bodies on their
    /// Kafka coordinates, and a subscription only moves to a newer (`signedDate`, then `notification_uuid`)
    /// notification, so writing a batch again changes nothing and reports duplicates.
    ///
    /// A verified notification PostgreSQL cannot hold (a NUL character, a date past year 9999, a constraint the
    /// server enforces) is stored as rejected with status `UNSTORABLE` and the reason, and the rest of the batch
    /// is stored: one bad row never blocks a partition.
    ///
    /// A batch with ``NotificationBatch/fences`` is stored only while each is its partition's latest claim and the
    /// database holds the partition through what the fence expects, checked first in the transaction
    /// (``NotificationStore/claim(_:)``).
    ///
    /// - Throws: ``NotificationStoreError``; when ``NotificationStoreError/isRetriable``, write the same batch again
    ///   later. Nothing of it was written, unless the connection went while `COMMIT` was on the wire: then the
    ///   retry reports duplicates, and the first attempt's outbox rows are still in the table to publish.
    ///   ``NotificationStoreError/Code/partitionNotOwned``: a fence's partition was claimed by someone else since,
    ///   and nothing was written; ``NotificationStoreError/Code/storedOffsetBehind``: the database holds a fence's
    ///   partition through less than the fence expects (restored to an earlier point), and nothing was written.
    /// - Parameter lockTimeout: how long a statement may wait for a row lock (another transaction's, a retention
    ///   drop's) before the write fails as ``NotificationStoreError/Code/conflict``, not written again here: for a
    ///   batch gathered from several callers, who then write theirs apart. Nil: the operation timeout bounds the wait.
    package func write(
        _ batch: NotificationBatch,
        lockTimeout: Duration? = nil
    ) async throws(NotificationStoreError) -> BatchWriteResult {
        let prepared = PreparedBatch(batch)
        let fences = batch.fences
        let usesPreparedStatements = configuration.usesPreparedStatements
        let logger = self.logger
        let operation = "writing a batch of \(batch.entries.count) notifications"
        var attempt = 1
        var madePartitions = false
        while true {
            do throws(NotificationStoreError) {
                do throws(NotificationStoreError) {
                    var result = try await inTransaction(operation, lockTimeout: lockTimeout) { connection in
                        try await Self.fence(fences, on: connection, logger: logger)
                        return try await Self.write(
                            prepared,
                            prepares: usesPreparedStatements,
                            on: connection,
                            logger: logger
                        )
                    }
                    result.outboxMessages = prepared.outboxMessages(for: result.outbox, storedAt: Date())
                    return result
                } catch let error
                    where error.code == .conflict && attempt < 3
                    && (lockTimeout == nil || error.sqlState != "55P03")
                {
                    // Deadlocks cannot happen between our writers (rows are locked in key order), but other writers
                    // may hold locks too; such a transaction simply runs again.
                    attempt += 1
                    logger.debug("Batch write conflicted; writing it again", metadata: ["error": "\(error)"])
                    continue
                } catch let error
                    where error.sqlState.map(PostgresFailure.isRowDataError(sqlState:)) == true
                    && error.code != .bodyPartitionMissing
                {
                    logger.warning(
                        "A notification of the batch cannot be stored; writing the batch row by row to set it aside",
                        metadata: ["error": "\(error)"]
                    )
                    return try await inTransaction(operation + " row by row", lockTimeout: lockTimeout) { connection in
                        try await Self.fence(fences, on: connection, logger: logger)
                        return try await Self.writeIsolatingRows(
                            prepared,
                            prepares: usesPreparedStatements,
                            on: connection,
                            logger: logger
                        )
                    }
                }
            } catch let error where error.code == .bodyPartitionMissing && !madePartitions {
                // Partitions are made ahead (``makeBodyPartitions(monthsAhead:now:)``): a body of a month not made
                // (received long ago and replayed, a month retention dropped meanwhile) makes it here, outside the
                // batch's transaction, and the batch is written again.
                madePartitions = true
                logger.notice(
                    "A body's month has no partition; making it and writing the batch again",
                    metadata: ["months": "\(prepared.bodyMonths.sorted())"]
                )
                try await makeBodyPartitions(for: prepared.bodyMonths)
            }
        }
    }

    /// The batch's rows.
    private static func write(
        _ batch: PreparedBatch,
        prepares: Bool,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> BatchWriteResult {
        var result = BatchWriteResult()
        let headers = batch.headers
        if !batch.notifications.isEmpty {
            try await writeNotificationsByUnnest(
                batch.notifications,
                headers: headers,
                prepares: prepares,
                on: connection,
                logger: logger,
                into: &result
            )
        }
        result.duplicateNotifications = batch.notifications.count - result.storedNotifications.count
        try await writeRejected(batch.rejected, on: connection, logger: logger, into: &result)
        result.duplicateRejections += batch.repeatedRejections
        result.unstorableNotifications = batch.unstorable
        result.outbox.sort { $0.id < $1.id }
        return result
    }

    /// The slow path after a row-level data error: each notification in its own savepoint, so that the ones the
    /// server refuses are set aside as `UNSTORABLE` rejections and the others are stored.
    private static func writeIsolatingRows(
        _ batch: PreparedBatch,
        prepares: Bool,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> BatchWriteResult {
        var result = BatchWriteResult()
        try await storeHeaders(batch.headers, on: connection, logger: logger)
        var rejected = batch.rejected
        var stored = 0
        for row in batch.notifications {
            try await connection.query("SAVEPOINT asnp_row", logger: logger)
            do {
                try await writeNotificationsByUnnest(
                    [row],
                    headers: [:],
                    prepares: prepares,
                    on: connection,
                    logger: logger,
                    into: &result
                )
                try await connection.query("RELEASE SAVEPOINT asnp_row", logger: logger)
                stored += 1
            } catch let error as PSQLError {
                // A month dropped by retention since the batch's first attempt is nobody's fault: written again.
                guard let sqlState = error.serverInfo?[.sqlState],
                    PostgresFailure.isRowDataError(sqlState: sqlState),
                    !NotificationStoreError.isMissingBodyPartition(error)
                else { throw error }
                try await connection.query("ROLLBACK TO SAVEPOINT asnp_row", logger: logger)
                let message = error.serverInfo?[.message] ?? "SQLSTATE \(sqlState)"
                logger.warning(
                    "Stored a verified notification as UNSTORABLE",
                    metadata: ["notificationUUID": "\(row.notificationUUID)", "sqlState": "\(sqlState)"]
                )
                rejected.append(
                    RejectedRow(
                        ordinal: row.ordinal,
                        status: RejectedRow.unstorableStatus,
                        reason: "PostgreSQL refused it: \(message) (SQLSTATE \(sqlState))",
                        raw: batch.rawNotification(ordinal: row.ordinal)
                    )
                )
            }
        }
        result.duplicateNotifications = stored - result.storedNotifications.count
        rejected.sort { $0.ordinal < $1.ordinal }
        // The same Kafka record twice in the batch (a redelivery) is one rejection.
        var sources = Set<KafkaTopicPartitionOffset>()
        let unique = rejected.filter { sources.insert($0.source).inserted }
        try await writeRejected(unique, on: connection, logger: logger, into: &result)
        result.duplicateRejections += batch.repeatedRejections + (rejected.count - unique.count)
        result.unstorableNotifications = batch.unstorable + (batch.notifications.count - stored)
        result.outbox.sort { $0.id < $1.id }
        return result
    }

    /// Stores `headers` (``BatchStatements/storeHeaders``).
    static func storeHeaders(
        _ headers: [JWSHeaderDigest: [UInt8]],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard !headers.isEmpty else { return }
        var bindings = PostgresBindings(capacity: 2)
        bindings.appendHeaders(headers)
        try await connection.query(
            PostgresQuery(unsafeSQL: BatchStatements.storeHeaders, binds: bindings),
            logger: logger
        )
    }

    private static func writeNotificationsByUnnest(
        _ rows: [NotificationRow],
        headers: [JWSHeaderDigest: [UInt8]],
        prepares: Bool,
        on connection: PostgresConnection,
        logger: Logger,
        into result: inout BatchWriteResult
    ) async throws {
        let statement = WriteNotificationsStatement(rows: rows, headers: headers)
        try collect(
            try await PostgresNIOWorkarounds.rows(of: statement, prepares: prepares, on: connection, logger: logger),
            into: &result
        )
    }

    private static func writeRejected(
        _ rows: [RejectedRow],
        on connection: PostgresConnection,
        logger: Logger,
        into result: inout BatchWriteResult
    ) async throws {
        guard !rows.isEmpty else { return }
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(rows.map(\.ordinal))
        bindings.append(rows.map(\.status))
        bindings.append(rows.map(\.reason))
        bindings.append(rows.map { ByteBuffer(bytes: $0.body.bytes) })
        bindings.append(rows.map(\.headers))
        bindings.append(rows.map(\.receivedAt))
        bindings.append(rows.map(\.source.topic))
        bindings.append(rows.map(\.source.partition))
        bindings.append(rows.map(\.source.offset))
        bindings.append(NullableArray(rows.map(\.key)))
        bindings.append(NullableArray(rows.map(\.traceContext?.traceparent)))
        bindings.append(NullableArray(rows.map(\.traceContext?.tracestate)))
        let inserted = try await connection.query(
            PostgresQuery(unsafeSQL: BatchStatements.writeRejected, binds: bindings),
            logger: logger
        )
        var stored = 0
        for try await (id, key, rejectedID, topic, partition, traceparent, tracestate) in inserted.decode(
            (Int64, String?, Int64, String, Int32, String?, String?).self
        ) {
            stored += 1
            var entry = OutboxEntry(
                id: id,
                stream: .deadLetter,
                messageKey: key,
                rejectedID: rejectedID,
                source: KafkaTopicPartition(topic: topic, partition: partition)
            )
            entry.traceContext = TraceContext(traceparent: traceparent, tracestate: tracestate)
            result.outbox.append(entry)
        }
        result.storedRejections += stored
        result.duplicateRejections += rows.count - stored
    }

    /// Reads the merging statement's rows: one per outbox entry written.
    private static func collect(_ rows: [PostgresRow], into result: inout BatchWriteResult) throws {
        for row in rows {
            let cells = row.makeRandomAccess()
            let stream = OutboxStream(rawValue: try cells[0].decode(String.self))
            let notificationUUID = try cells[2].decode(UUID.self)
            var entry = OutboxEntry(
                id: try cells[1].decode(Int64.self),
                stream: stream,
                messageKey: try cells[3].decode(String?.self),
                notificationUUID: notificationUUID,
                source: KafkaTopicPartition(
                    topic: try cells[4].decode(String.self),
                    partition: try cells[5].decode(Int32.self)
                )
            )
            if stream == .decoded {
                result.storedNotifications.append(notificationUUID)
            } else {
                let state = try SubscriptionState(cells, from: 6)
                entry.subscriptionState = state
                entry.subscriptionStateJSON = try cells[6 + BatchStatements.subscriptionColumns.count].decode(
                    String?.self
                )
                entry.subscriptionStateVersion = try cells[7 + BatchStatements.subscriptionColumns.count].decode(
                    Int64?.self
                )
                result.subscriptionChanges.append(state)
            }
            entry.traceContext = TraceContext(
                traceparent: try cells[8 + BatchStatements.subscriptionColumns.count].decode(String?.self),
                tracestate: try cells[9 + BatchStatements.subscriptionColumns.count].decode(String?.self)
            )
            result.outbox.append(entry)
        }
    }
}

extension SubscriptionState {
    /// A state from the cells of a row, ``BatchStatements/subscriptionColumns`` starting at `start`.
    init(_ cells: PostgresRandomAccessRow, from start: Int) throws {
        self.init(
            originalTransactionId: try cells[start].decode(String.self),
            lastNotificationUUID: try cells[start + 1].decode(UUID.self),
            lastNotificationType: try cells[start + 2].decode(String.self),
            lastSubtype: try cells[start + 3].decode(String?.self),
            lastSignedDate: try cells[start + 4].decode(Date.self),
            transactionId: try cells[start + 5].decode(String?.self),
            productId: try cells[start + 6].decode(String?.self),
            expiresDate: try cells[start + 7].decode(Date?.self),
            autoRenewStatus: try cells[start + 8].decode(Int16?.self).map(Int.init),
            revocationDate: try cells[start + 9].decode(Date?.self),
            environment: try cells[start + 10].decode(String?.self),
            bundleId: try cells[start + 11].decode(String?.self),
            appAppleId: try cells[start + 12].decode(Int64?.self),
            status: try cells[start + 13].decode(Int16?.self).map(Int.init),
            gracePeriodExpiresDate: try cells[start + 14].decode(Date?.self),
            autoRenewProductId: try cells[start + 15].decode(String?.self),
            price: try cells[start + 16].decode(Int64?.self),
            currency: try cells[start + 17].decode(String?.self),
            offerType: try cells[start + 18].decode(Int16?.self).map(Int.init),
            entitled: try cells[start + 19].decode(Bool?.self),
            entitledUntil: try cells[start + 20].decode(Date?.self),
            updatedAt: try cells[start + 21].decode(Date.self),
            productType: try cells[start + 22].decode(String?.self),
            purchaseDate: try cells[start + 23].decode(Date?.self),
            revocationReason: try cells[start + 24].decode(Int16?.self).map(Int.init),
            inAppOwnershipType: try cells[start + 25].decode(String?.self),
            subscriptionGroupIdentifier: try cells[start + 26].decode(String?.self),
            appAccountToken: try cells[start + 27].decode(String?.self),
            previousOriginalTransactionId: try cells[start + 28].decode(String?.self),
            renewalDate: try cells[start + 29].decode(Date?.self),
            isInBillingRetry: try cells[start + 30].decode(Bool?.self),
            expirationIntent: try cells[start + 31].decode(Int16?.self).map(Int.init)
        )
    }
}
