import Logging
import NotificationBodies
import PostgresNIO
import PostgresRuntime
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
    /// The pool, the operations' deadlines and the shutdown.
    let runtime: PostgresRuntime
    package let logger: Logger
    /// The JWS headers of packed bodies read so far.
    let headerCache = JWSHeaderCache()

    /// Creates a store; nothing connects until ``run()`` runs and an operation needs a connection.
    package init(configuration: NotificationStoreConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.runtime = PostgresRuntime(configuration: configuration.runtimeConfiguration, logger: logger)
    }

    /// Runs the connection pool until cancelled or gracefully shut down (``PostgresRuntime/run()``): the operations
    /// still running end first, then the pool closes, each step bounded (Docs/store.md, "Shutdown").
    package func run() async throws {
        await runtime.run()
    }

    /// The connections the store's operations hold now, each with its operation and for how long; "none" if none.
    package var leases: String { runtime.leases }

    /// Runs `body` on one connection, inside one transaction, within the operation timeout
    /// (``PostgresRuntime/inTransaction(_:lockTimeout:_:)``); failures are classified into a
    /// ``NotificationStoreError``. With `lockTimeout`, a statement waiting longer than that for a lock fails as
    /// ``NotificationStoreError/Code/conflict`` (SQLSTATE 55P03).
    func inTransaction<Result: Sendable>(
        _ operation: String,
        lockTimeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws(NotificationStoreError) -> Result {
        try await classifying(operation) { try await runtime.inTransaction(operation, lockTimeout: lockTimeout, body) }
    }

    /// Runs `body` on one pooled connection within the operation timeout.
    package func withConnection<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws(NotificationStoreError) -> Result {
        try await classifying(operation) { try await runtime.withConnection(operation, body) }
    }

    /// What `body`, a runtime call, returns; its failure classified into a ``NotificationStoreError``.
    func classifying<Result>(
        _ operation: String,
        _ body: () async throws -> Result
    ) async throws(NotificationStoreError) -> Result {
        do {
            return try await body()
        } catch {
            throw NotificationStoreError(classifying: error, operation: operation, endpoint: configuration.endpoint)
        }
    }
}
