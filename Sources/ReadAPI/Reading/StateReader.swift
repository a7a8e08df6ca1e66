import Logging
import NotificationSchema
import PostgresNIO
import PostgresRuntime
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The API's reads of PostgreSQL: `subscriptions` and `notifications_decoded`, never a write, so its URL may name a
/// streaming replica or a PgBouncer (no statement is prepared by name). Every read is of one app and environment:
/// a row of another is not found, the same as no row.
///
/// A `Service`: ``run()`` runs the connection pool and checks the schema until it is recent enough (``schemaProblem``
/// says why not meanwhile, for the readiness probe).
package final class StateReader: Service, Sendable {
    /// The schema version whose tables and views the reads need (the entitlement columns and their rules).
    package static let minimumSchemaVersion = 8

    private let runtime: PostgresRuntime
    private let logger: Logger
    private let schema = Mutex<String?>("the database schema has not been checked yet")

    package init(configuration: PostgresRuntime.Configuration, logger: Logger) {
        self.runtime = PostgresRuntime(configuration: configuration, logger: logger)
        self.logger = logger
    }

    /// Why the API cannot answer yet (the schema unchecked, too old, the database unreachable at start); nil once
    /// it can.
    package var schemaProblem: String? { schema.withLock { $0 } }

    /// Runs the pool until a graceful shutdown, checking the schema (every 2 s until it is recent enough).
    package func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await self.runtime.run() }
            group.addTask {
                do {
                    try await cancelWhenGracefulShutdown { try await self.checkSchemaUntilReady() }
                } catch is CancellationError {}
            }
        }
    }

    private func checkSchemaUntilReady() async throws {
        var said: String?
        while true {
            let problem: String?
            do {
                let version = try await runtime.schemaVersion(table: PostgresRuntime.Migrations.appStore.table)
                problem =
                    version >= Self.minimumSchemaVersion
                    ? nil
                    : "the database schema is at version \(version), the API reads version "
                        + "\(Self.minimumSchemaVersion) or later; run `asnp migrate`"
            } catch {
                problem = "the database schema cannot be read: \(error)"
            }
            schema.withLock { $0 = problem }
            guard let problem else {
                if said != nil { logger.notice("The read API is ready") }
                return
            }
            // Once per reason: a rollout waiting for `asnp migrate` would otherwise log every 2 s.
            if problem != said { logger.warning("The read API is not ready", metadata: ["reason": "\(problem)"]) }
            said = problem
            try await Task.sleep(for: .seconds(2))
        }
    }

    /// Whether row `s` gives access at the instant bound as `$4` (every read binds it there): the view
    /// `subscription_access`'s rule.
    private static let accessAtParameter = SubscriptionStateRules.access(at: "$4", row: "s")

    /// The columns every answer about a subscription reads, `s` being its row: a ``SubscriptionRow``.
    private static let subscriptionColumns =
        "s.original_transaction_id, s.entitled, s.entitled_until, \(accessAtParameter), to_jsonb(s)::text"

    /// The purchase and scope's parameters, then `now`: $1 to $4.
    private static func bindings(_ key: some PostgresNonThrowingEncodable, _ scope: APIScope, _ now: Date)
        -> PostgresBindings
    {
        var bindings = PostgresBindings()
        bindings.append(key)
        bindings.append(scope.bundleId)
        bindings.append(scope.environment)
        bindings.append(now)
        return bindings
    }

    /// The subscription (or one-time purchase) `originalTransactionId` of `scope`, with its access at `now`, or nil.
    package func subscription(
        _ originalTransactionId: String,
        in scope: APIScope,
        at now: Date
    ) async throws -> SubscriptionRow? {
        let logger = self.logger
        let query = PostgresQuery(
            unsafeSQL: """
                SELECT \(Self.subscriptionColumns) FROM subscriptions s
                WHERE s.original_transaction_id = $1 AND s.bundle_id = $2 AND s.environment = $3
                """,
            binds: Self.bindings(originalTransactionId, scope, now)
        )
        return try await runtime.withConnection("reading a subscription") { connection in
            let rows = try await connection.query(query, logger: logger)
            for try await row in rows.decode(SubscriptionRow.Columns.self) { return SubscriptionRow(row) }
            return nil
        }
    }

    /// Every purchase of the customer `appAccountToken` (a UUID, matched in any case) in `scope`, at most `limit`
    /// of them listed, and their access at `now` per subscription group; nil when there is none.
    package func customer(
        _ appAccountToken: UUID,
        in scope: APIScope,
        at now: Date,
        limit: Int
    ) async throws -> CustomerRows? {
        let logger = self.logger
        // Apple hands back the token the app gave; apps write UUIDs in either case. Each spelling uses the index.
        let spellings = Array(Set([appAccountToken.uuidString.lowercased(), appAccountToken.uuidString]))
        let inScope = """
            s.app_account_token = ANY($1) AND s.bundle_id = $2 AND s.environment = $3
            """
        var listed = Self.bindings(spellings, scope, now)
        listed.append(limit)
        let purchasesQuery = PostgresQuery(
            unsafeSQL: """
                SELECT \(Self.subscriptionColumns), count(*) OVER (), bool_or(\(Self.accessAtParameter)) OVER ()
                FROM subscriptions s WHERE \(inScope)
                ORDER BY s.original_transaction_id LIMIT $5
                """,
            binds: listed
        )
        let groupsQuery = PostgresQuery(
            unsafeSQL: """
                SELECT subscription_group_identifier, bool_or(access),
                    CASE WHEN bool_or(access AND entitled_until IS NULL) THEN NULL
                        ELSE max(entitled_until) FILTER (WHERE access) END,
                    array_agg(original_transaction_id ORDER BY original_transaction_id) FILTER (WHERE access),
                    array_agg(original_transaction_id ORDER BY original_transaction_id)
                FROM (
                    SELECT s.subscription_group_identifier, s.original_transaction_id, s.entitled_until,
                        \(Self.accessAtParameter) AS access
                    FROM subscriptions s WHERE \(inScope) AND s.subscription_group_identifier IS NOT NULL
                ) grouped
                GROUP BY subscription_group_identifier ORDER BY subscription_group_identifier
                """,
            binds: Self.bindings(spellings, scope, now)
        )
        return try await runtime.withConnection("reading a customer") { connection in
            let purchases = try await connection.query(purchasesQuery, logger: logger)
            var rows: [SubscriptionRow] = []
            var total = 0
            var hasAccess = false
            for try await (id, entitled, until, access, json, count, anyAccess) in purchases.decode(
                (String, Bool?, Date?, Bool, String, Int, Bool).self
            ) {
                rows.append(SubscriptionRow((id, entitled, until, access, json)))
                total = count
                hasAccess = anyAccess
            }
            guard !rows.isEmpty else { return nil }
            let groupRows = try await connection.query(groupsQuery, logger: logger)
            var groups: [CustomerRows.Group] = []
            for try await (group, access, until, entitledIds, ids) in groupRows.decode(
                (String, Bool, Date?, [String]?, [String]).self
            ) {
                groups.append(
                    CustomerRows.Group(
                        subscriptionGroupIdentifier: group,
                        hasAccess: access,
                        entitledUntil: until,
                        entitledOriginalTransactionIds: entitledIds ?? [],
                        originalTransactionIds: ids
                    )
                )
            }
            return CustomerRows(purchases: rows, total: total, hasAccess: hasAccess, groups: groups)
        }
    }

    /// A page of at most `limit` notifications of subscription `originalTransactionId` in `scope`, newest first,
    /// from `cursor` (nil: the newest).
    package func notifications(
        of originalTransactionId: String,
        in scope: APIScope,
        from cursor: NotificationCursor?,
        limit: Int
    ) async throws -> NotificationPage {
        let logger = self.logger
        let newer = cursor?.direction == .newer
        // One more than the page, to know whether another follows.
        var bindings = PostgresBindings()
        bindings.append(originalTransactionId)
        bindings.append(scope.bundleId)
        bindings.append(scope.environment)
        bindings.append(limit + 1)
        var beyond = ""
        if let cursor {
            bindings.append(cursor.microseconds)
            bindings.append(cursor.notificationUUID)
            beyond = "AND (\(Self.positionSQL), n.notification_uuid) \(newer ? ">" : "<") ($5, $6)"
        }
        let order = newer ? "ASC" : "DESC"
        let query = PostgresQuery(
            unsafeSQL: """
                SELECT \(Self.positionSQL), n.notification_uuid, \(Self.notificationJSON)::text
                FROM notifications_decoded n
                WHERE n.original_transaction_id = $1 AND n.bundle_id = $2 AND n.environment = $3 \(beyond)
                ORDER BY 1 \(order), n.notification_uuid \(order) LIMIT $4
                """,
            binds: bindings
        )
        var rows = try await runtime.withConnection("reading a subscription's notifications") { connection in
            var rows: [(position: Int64, uuid: UUID, json: String)] = []
            for try await row in try await connection.query(query, logger: logger).decode((Int64, UUID, String).self) {
                rows.append(row)
            }
            return rows
        }
        let more = rows.count > limit
        rows = Array(rows.prefix(limit))
        if newer { rows.reverse() }
        func position(_ direction: NotificationCursor.Direction, at row: (position: Int64, uuid: UUID, json: String)?)
            -> NotificationCursor?
        {
            row.map { NotificationCursor(direction: direction, microseconds: $0.position, notificationUUID: $0.uuid) }
        }
        // Reading older: a page follows if more were found, and one precedes if this page started from a cursor.
        // Reading newer: the other way round.
        let hasOlder = newer ? true : more
        let hasNewer = newer ? more : cursor != nil
        return NotificationPage(
            notifications: rows.map(\.json),
            next: hasOlder ? position(.older, at: rows.last) : nil,
            previous: hasNewer ? position(.newer, at: rows.first) : nil
        )
    }

    /// A notification's place in the order: its signed date (V1 has none: when it was received), in microseconds.
    private static let positionSQL =
        "(extract(epoch FROM COALESCE(n.signed_date, n.received_at)) * 1000000)::bigint"

    /// A notification as the API answers it: its facts, and its decoded JSON while its body is kept.
    private static let notificationJSON = """
        json_build_object(
            'notification_uuid', n.notification_uuid, 'version', n.version,
            'notification_type', n.notification_type, 'subtype', n.subtype, 'signed_date', n.signed_date,
            'received_at', n.received_at, 'environment', n.environment, 'bundle_id', n.bundle_id,
            'original_transaction_id', n.original_transaction_id, 'transaction_id', n.transaction_id,
            'product_id', n.product_id, 'expires_date', n.expires_date, 'revocation_date', n.revocation_date,
            'auto_renew_status', n.auto_renew_status, 'body_kept', n.decoded IS NOT NULL, 'decoded', n.decoded
        )
        """
}
