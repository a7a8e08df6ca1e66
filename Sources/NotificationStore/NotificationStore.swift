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
public final class NotificationStore: Service, Sendable {
    /// The settings this store was made with.
    public let configuration: NotificationStoreConfiguration
    let client: PostgresClient
    let logger: Logger

    /// Creates a store; nothing connects until ``run()`` runs and an operation needs a connection.
    public init(configuration: NotificationStoreConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.client = PostgresClient(configuration: configuration.postgresClientConfiguration, backgroundLogger: logger)
    }

    /// Runs the connection pool until cancelled or gracefully shut down.
    public func run() async throws {
        await client.run()
    }

    /// Runs `body` on one connection, inside one transaction, within the operation timeout.
    ///
    /// The transaction commits when `body` returns and rolls back when it throws. Failures are classified into a
    /// ``NotificationStoreError``; a timeout cancels the work, which rolls the transaction back.
    func inTransaction<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws(NotificationStoreError) -> Result {
        try await withOperationTimeout(operation) { [client, logger] in
            try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                do {
                    let result = try await body(connection)
                    try await connection.query("COMMIT", logger: logger)
                    return result
                } catch {
                    // A broken connection cannot roll back, and need not: the server aborts its transaction.
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        }
    }

    /// Runs `body` on one connection (no transaction) within the operation timeout.
    func withConnection<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws(NotificationStoreError) -> Result {
        try await withOperationTimeout(operation) { [client] in
            try await client.withConnection(body)
        }
    }

    private func withOperationTimeout<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable () async throws -> Result
    ) async throws(NotificationStoreError) -> Result {
        let timeout = configuration.operationTimeout
        do {
            return try await withThrowingTaskGroup(of: Result?.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let value = try await group.next()! else {
                    throw NotificationStoreError(
                        code: .timedOut,
                        reason: "\(operation) did not finish within \(timeout) "
                            + "(is PostgreSQL at \(configuration.endpoint) up?)"
                    )
                }
                return value
            }
        } catch {
            throw NotificationStoreError(classifying: error, operation: operation, endpoint: configuration.endpoint)
        }
    }
}

extension NotificationStoreConfiguration {
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
                tls: tls.postgresTLS
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
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return configuration
    }
}

extension NotificationStoreConfiguration.TLSMode {
    var postgresTLS: PostgresClient.Configuration.TLS {
        switch base {
        case .disable:
            return .disable
        case .prefer, .require:
            // libpq's prefer and require encrypt without checking the certificate.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            return base == .prefer ? .prefer(tls) : .require(tls)
        case .verifyFull:
            return .require(.makeClientConfiguration())
        }
    }
}
