import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension NotificationStore {
    /// A subscription's current state, or nil when no notification of it has been stored.
    package func subscription(originalTransactionId: String) async throws(NotificationStoreError) -> SubscriptionState?
    {
        let logger = self.logger
        return try await withConnection("reading a subscription") { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: BatchStatements.subscriptionColumns.map(\.name).joined(separator: ", "))
                FROM subscriptions WHERE original_transaction_id = \(originalTransactionId)
                """,
                logger: logger
            )
            for try await row in rows {
                return try SubscriptionState(row.makeRandomAccess(), from: 0)
            }
            return nil
        }
    }

    /// The subscriptions of the customer your app knows by `appAccountToken` (the token it gave at purchase), by
    /// original transaction id.
    package func subscriptions(appAccountToken: String) async throws(NotificationStoreError) -> [SubscriptionState] {
        let logger = self.logger
        return try await withConnection("reading a customer's subscriptions") { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: BatchStatements.subscriptionColumns.map(\.name).joined(separator: ", "))
                FROM subscriptions WHERE app_account_token = \(appAccountToken)
                ORDER BY original_transaction_id
                """,
                logger: logger
            )
            var states: [SubscriptionState] = []
            for try await row in rows { states.append(try SubscriptionState(row.makeRandomAccess(), from: 0)) }
            return states
        }
    }

    /// A subscription's notifications, oldest first by `signedDate` (ties by `notification_uuid`, as the
    /// last-writer-wins guard orders them); at most `limit`.
    package func notifications(
        originalTransactionId: String,
        limit: Int = 1000
    ) async throws(NotificationStoreError) -> [StoredNotificationSummary] {
        let logger = self.logger
        return try await withConnection("reading a subscription's notifications") { connection in
            let rows = try await connection.query(
                """
                SELECT notification_uuid, version, notification_type, subtype, signed_date, environment,
                    original_transaction_id, transaction_id, product_id, expires_date, revocation_date,
                    auto_renew_status, received_at, kafka_topic, kafka_partition, kafka_offset
                FROM notifications WHERE original_transaction_id = \(originalTransactionId)
                ORDER BY signed_date, notification_uuid
                LIMIT \(limit)
                """,
                logger: logger
            )
            var summaries: [StoredNotificationSummary] = []
            for try await row in rows {
                let cells = row.makeRandomAccess()
                summaries.append(
                    StoredNotificationSummary(
                        notificationUUID: try cells[0].decode(UUID.self),
                        version: Int(try cells[1].decode(Int16.self)),
                        notificationType: try cells[2].decode(String.self),
                        subtype: try cells[3].decode(String?.self),
                        signedDate: try cells[4].decode(Date?.self),
                        environment: try cells[5].decode(String?.self),
                        originalTransactionId: try cells[6].decode(String?.self),
                        transactionId: try cells[7].decode(String?.self),
                        productId: try cells[8].decode(String?.self),
                        expiresDate: try cells[9].decode(Date?.self),
                        revocationDate: try cells[10].decode(Date?.self),
                        autoRenewStatus: try cells[11].decode(Int16?.self).map(Int.init),
                        receivedAt: try cells[12].decode(Date.self),
                        kafkaTopic: try cells[13].decode(String.self),
                        kafkaPartition: try cells[14].decode(Int32.self),
                        kafkaOffset: try cells[15].decode(Int64.self)
                    )
                )
            }
            return summaries
        }
    }
}
