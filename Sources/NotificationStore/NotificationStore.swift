import Logging
import NIOSSL
import PostgresNIO
import ServiceLifecycle

/// The PostgreSQL store: the durable truth that downstream teams read.
///
/// Every consumed body ends up here exactly once, decoded in `notifications` or rejected in
/// `rejected_notifications`; `subscriptions` follows each subscription's newest notification by `signedDate`;
/// `outbox` holds the events still to publish. Docs/store.md describes the tables.
///
/// The store is a `Service`: its ``run()`` runs the connection pool, and operations wait for a connection only
/// while it runs. Put it in the same `ServiceGroup` as the services using it, before them, so that it shuts down
/// after them.
package final class NotificationStore: Service, Sendable {
    /// The settings this store was made with.
    package let configuration: NotificationStoreConfiguration
    let client: PostgresClient
    package let logger: Logger
    /// Operations still running, waited for before the pool shuts down.
    let operations = OperationsInFlight()
    /// The JWS headers of packed bodies read so far.
    let headerCache = JWSHeaderCache()
    /// The pool's connections not closed yet, for a shutdown that does not end.
    package let poolConnections = PoolConnectionLedger()

    /// Creates a store; nothing connects until ``run()`` runs and an operation needs a connection.
    package init(configuration: NotificationStoreConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        var poolLogger = logger
        poolLogger.handler = PoolLogHandler(base: logger.handler, ledger: poolConnections)
        self.client = PostgresClient(
            configuration: configuration.postgresClientConfiguration,
            backgroundLogger: poolLogger
        )
    }

    /// Runs the connection pool until cancelled or gracefully shut down.
    ///
    /// Before the pool closes its connections, the operations still running end (for at most the operation
    /// timeout and 5 s): postgres-nio 1.33.2 stops the process when a connection closes while COPY data is being
    /// sent, and an operation whose caller had its answer (a deadline) may still be in its COPY; if one still is,
    /// the pool is left open. The pool then gets the connect timeout and 5 s to end, and is left if it takes longer,
    /// with an error naming the connections it still has: a shutdown must end (Docs/store.md, "Shutdown").
    package func run() async throws {
        // Detached, so that neither the cancellation nor the graceful shutdown reaches it before the drain below. An
        // operation leased before the task starts waits for it (postgres-nio logs that run() was not called yet).
        let pool = Task.detached { [client] in await client.run() }
        try? await gracefulShutdown()
        let drainLimit = configuration.operationTimeout + .seconds(5)
        logger.debug("Stopping the store", metadata: ["operations": "\(operations.count)"])
        await operations.drain(timeout: drainLimit)
        let close = operations.closePool()
        guard close.allowed else {
            // An operation still sending COPY data past the drain (a large batch on a slow server): closing its
            // connection would stop the process. It goes on; the pool ends with the process.
            logger.warning(
                "Leaving the PostgreSQL connection pool open: operations still send COPY data",
                metadata: ["copying": "\(close.copying)", "waited": "\(drainLimit)"]
            )
            return
        }
        pool.cancel()
        let closeLimit = configuration.connectTimeout + .seconds(5)
        if await !OperationsInFlight.wait(for: [pool], atMost: closeLimit) {
            logger.error(
                "The PostgreSQL connection pool did not close within \(closeLimit) of its shutdown; leaving it",
                metadata: [
                    "openConnections": "\(poolConnections.openConnections)",
                    "operationsRunning": "\(operations.count)",
                ]
            )
        }
    }

    /// Runs `body` on one connection, inside one transaction, within the operation timeout.
    ///
    /// The transaction commits when `body` returns and rolls back when it throws. Failures are classified into a
    /// ``NotificationStoreError``; at the timeout the connection is closed, which rolls the transaction back.
    ///
    /// The server enforces the same timeout on the transaction: a closed socket goes unnoticed by a backend that
    /// waits on a lock, and a transaction that outlived its caller must not keep its row locks from the retry.
    ///
    /// With `lockTimeout`, a statement waiting longer than that for a lock fails as
    /// ``NotificationStoreError/Code/conflict`` (SQLSTATE 55P03).
    func inTransaction<Result: Sendable>(
        _ operation: String,
        lockTimeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws(NotificationStoreError) -> Result {
        let logger = self.logger
        let serverTimeout = configuration.serverTimeoutSetting
        let lockTimeoutSetting = lockTimeout.map(NotificationStoreConfiguration.setting)
        return try await withConnection(operation) { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                // Without a lock timeout of ours, the session's own (the role's, the server's) stays.
                try await connection.query(
                    """
                    SELECT set_config('statement_timeout', \(serverTimeout), true),
                           set_config('idle_in_transaction_session_timeout', \(serverTimeout), true),
                           set_config(
                               'lock_timeout',
                               COALESCE(\(lockTimeoutSetting)::text, current_setting('lock_timeout')),
                               true
                           )
                    """,
                    logger: logger
                )
                let result = try await body(connection)
                // Past the deadline the caller was told TIMED_OUT: a transaction that got through after all
                // (its lock released, say) must not commit behind its back.
                try Task.checkCancellation()
                // A statement's error reaches only whoever reads its rows (postgres-nio hands a SELECT's error
                // over with them): one never read left the transaction failed, and PostgreSQL answers COMMIT in a
                // failed transaction with ROLLBACK, which postgres-nio reports as success.
                let committed = try await connection.query("COMMIT", logger: logger) { _ in }.get()
                guard committed.command == "COMMIT" else {
                    throw NotificationStoreError(
                        code: .rolledBack,
                        reason: "\(operation) was rolled back: one of its statements failed unseen",
                        context: "the server answered COMMIT with \(committed.command)"
                    )
                }
                return result
            } catch {
                // A broken connection cannot roll back, and need not: the server aborts its transaction.
                if connection.canRollBack(after: error) {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                }
                throw error
            }
        }
    }

    /// Runs `body` on one pooled connection within the operation timeout.
    package func withConnection<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws(NotificationStoreError) -> Result {
        let timeout = configuration.operationTimeout
        let endpoint = configuration.endpoint
        let started = ContinuousClock.now
        do {
            return try await OperationDeadline.run(
                timeout: timeout,
                operations: operations,
                timeoutError: {
                    NotificationStoreError(
                        code: .timedOut,
                        reason: "\(operation) did not finish within \(timeout) (is PostgreSQL at \(endpoint) up?)"
                    )
                }
            ) { [client, poolConnections] register in
                try await client.withConnection { connection in
                    register(connection)
                    let id = "\(connection.id)"
                    poolConnections.record("leased for \(operation)", connection: id)
                    defer { poolConnections.record("returned after \(operation)", connection: id, ifOpen: true) }
                    return try await body(connection)
                }
            }
        } catch {
            var failure = NotificationStoreError(classifying: error, operation: operation, endpoint: endpoint)
            // The server holds a transaction to the same deadline (idle_in_transaction_session_timeout) and ends the
            // connection when it passes, which can reach the work just before the deadline answers the caller.
            if failure.code == .unavailable, ContinuousClock.now - started >= timeout {
                failure = NotificationStoreError(
                    code: .timedOut,
                    reason:
                        "\(operation) did not finish within \(timeout): the connection closed past it (\(failure.reason))"
                )
            }
            // Timed out: perhaps no connection can be made at all; if so, say why rather than "timed out".
            if failure.code == .timedOut, let reason = await connectionFailure(operation: operation) {
                throw reason
            }
            throw failure
        }
    }
}

extension NotificationStoreConfiguration {
    /// The operation timeout as a PostgreSQL setting value; at least 1 ms, since 0 turns a timeout off.
    var serverTimeoutSetting: String { Self.setting(operationTimeout) }

    /// A duration as a PostgreSQL timeout setting's value, in whole milliseconds; at least 1 ms, since 0 turns a
    /// timeout off.
    static func setting(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))ms"
    }

    var postgresClientConfiguration: PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            configuration = PostgresClient.Configuration(
                host: host,
                port: port,
                username: username,
                password: password,
                database: database,
                tls: postgresTLS
            )
        case .unixSocket(let path):
            configuration = PostgresClient.Configuration(
                unixSocketPath: path,
                username: username,
                password: password,
                database: database
            )
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = connectTimeout
        // No keep-alive queries: in postgres-nio 1.33.2 one that starts as the pool closes runs on a closed
        // connection, whose query never completes, and the pool never ends (a stress test reproduced it). An idle
        // connection is closed after a minute anyway; a dead one fails the next operation, which is retried.
        configuration.options.keepAliveBehavior = nil
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    /// What every session of the store starts with: its name in `pg_stat_activity`, and UTC as its `TimeZone`.
    ///
    /// The server's own zone is whatever `initdb` took from its machine (America/New_York, Europe/Berlin, ...), and
    /// SQL such as `timestamptz + interval '1 month'` or `date_trunc` on a `timestamptz` is computed in the session's
    /// zone: a body partition bounded that way missed or overlapped its UTC month around daylight-saving changes. A
    /// startup parameter rather than `SET`: PgBouncer (transaction pooling) keeps it per client, a `SET` would leak
    /// to whichever client gets the server connection next.
    var startupParameters: [(String, String)] {
        [("application_name", applicationName), ("TimeZone", "UTC")]
    }
}
