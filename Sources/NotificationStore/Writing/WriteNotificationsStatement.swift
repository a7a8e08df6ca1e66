import KafkaClient
import NotificationBodies
import PostgresNIO
import PostgresRuntime

/// The UNNEST write of a batch's notifications as a named prepared statement: each connection parses it once, and
/// PostgreSQL settles on one plan for it, instead of parsing and planning its ~100 lines for every batch (which
/// cost more than a small batch's rows did).
struct WriteNotificationsStatement: PostgresPreparedStatement {
    static let name = "asnp_write_notifications"
    static let sql = BatchStatements.writeNotifications(
        from: BatchStatements.unnestSource,
        headers: BatchStatements.headerSource(from: BatchStatements.stagedColumns.count + 1)
    )

    /// Rows stay rows: ``NotificationStore`` reads them by position (their shape depends on the outbox stream).
    typealias Row = PostgresRow

    var rows: [NotificationRow]
    /// The JWS headers the batch's packed bodies refer to, stored with its rows.
    var headers: [JWSHeaderDigest: [UInt8]]

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: BatchStatements.stagedColumns.count + 2)
        bindings.append(rows.map(\.ordinal))
        bindings.append(rows.map(\.notificationUUID))
        bindings.append(rows.map(\.version))
        bindings.append(rows.map(\.notificationType))
        bindings.append(NullableArray(rows.map(\.subtype)))
        bindings.append(NullableArray(rows.map(\.environment)))
        bindings.append(NullableArray(rows.map(\.bundleId)))
        bindings.append(NullableArray(rows.map(\.appAppleId)))
        bindings.append(NullableArray(rows.map(\.originalTransactionId)))
        bindings.append(NullableArray(rows.map(\.transactionId)))
        bindings.append(NullableArray(rows.map(\.productId)))
        bindings.append(NullableArray(rows.map(\.signedDate)))
        bindings.append(NullableArray(rows.map(\.expiresDate)))
        bindings.append(NullableArray(rows.map(\.revocationDate)))
        bindings.append(NullableArray(rows.map(\.autoRenewStatus)))
        bindings.append(NullableArray(rows.map(\.status)))
        bindings.append(NullableArray(rows.map(\.gracePeriodExpiresDate)))
        bindings.append(NullableArray(rows.map(\.autoRenewProductId)))
        bindings.append(NullableArray(rows.map(\.price)))
        bindings.append(NullableArray(rows.map(\.currency)))
        bindings.append(NullableArray(rows.map(\.offerType)))
        bindings.append(NullableArray(rows.map(\.stateDate)))
        bindings.append(rows.map(\.carriesTransaction))
        bindings.append(rows.map(\.carriesRenewalInfo))
        bindings.append(NullableArray(rows.map(\.purchaseDate)))
        bindings.append(NullableArray(rows.map(\.productType)))
        bindings.append(NullableArray(rows.map(\.revocationReason)))
        bindings.append(NullableArray(rows.map(\.inAppOwnershipType)))
        bindings.append(NullableArray(rows.map(\.subscriptionGroupIdentifier)))
        bindings.append(NullableArray(rows.map(\.appAccountToken)))
        bindings.append(NullableArray(rows.map(\.previousOriginalTransactionId)))
        bindings.append(NullableArray(rows.map(\.renewalDate)))
        bindings.append(NullableArray(rows.map(\.isInBillingRetry)))
        bindings.append(NullableArray(rows.map(\.expirationIntent)))
        bindings.append(rows.map(\.decoded))
        bindings.append(rows.map { ByteBuffer(bytes: $0.body.bytes) })
        bindings.append(rows.map(\.receivedAt))
        bindings.append(rows.map(\.source.topic))
        bindings.append(rows.map(\.source.partition))
        bindings.append(rows.map(\.source.offset))
        bindings.append(NullableArray(rows.map(\.traceContext?.traceparent)))
        bindings.append(NullableArray(rows.map(\.traceContext?.tracestate)))
        bindings.appendHeaders(headers)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

extension PostgresBindings {
    /// JWS headers as the two arrays of ``BatchStatements/headerSource(from:)``: digests, then texts.
    mutating func appendHeaders(_ headers: [JWSHeaderDigest: [UInt8]]) {
        let list = Array(headers)
        append(list.map { ByteBuffer(bytes: $0.key.bytes) })
        append(list.map { String(decoding: $0.value, as: UTF8.self) })
    }
}
