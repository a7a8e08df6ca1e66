import Logging
import NIOSSL
import PostgresNIO

extension NotificationStore {
    /// Why no connection can be made, found by making one directly (the pool retries failed connections until the
    /// operation times out and keeps their errors to itself); nil when one can be made.
    func connectionFailure(operation: String) async -> NotificationStoreError? {
        let configuration = self.configuration
        let connectionConfiguration: PostgresConnection.Configuration
        do {
            connectionConfiguration = try configuration.postgresConnectionConfiguration()
        } catch {
            return NotificationStoreError(
                code: .invalidConfiguration,
                reason: "\(operation) failed: the TLS settings cannot be used",
                context: String(describing: error)
            )
        }
        do {
            let connection = try await PostgresConnection.connect(
                configuration: connectionConfiguration,
                id: 0,
                logger: logger
            )
            try? await connection.close()
            return nil
        } catch {
            return NotificationStoreError(connecting: error, operation: operation, configuration: configuration)
        }
    }
}

extension NotificationStoreConfiguration {
    /// One connection's settings, as the pool makes them (``postgresClientConfiguration``).
    func postgresConnectionConfiguration() throws -> PostgresConnection.Configuration {
        var connection: PostgresConnection.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            switch (self.tls, tlsConfiguration) {
            case (_, nil): tls = .disable
            case (.prefer, let configuration?): tls = .prefer(try NIOSSLContext(configuration: configuration))
            case (_, let configuration?): tls = .require(try NIOSSLContext(configuration: configuration))
            }
            connection = PostgresConnection.Configuration(
                host: host,
                port: port,
                username: username,
                password: password,
                database: database,
                tls: tls
            )
        case .unixSocket(let path):
            connection = PostgresConnection.Configuration(
                unixSocketPath: path,
                username: username,
                password: password,
                database: database
            )
        }
        connection.options.connectTimeout = TimeAmount(connectTimeout)
        connection.options.additionalStartupParameters = startupParameters
        return connection
    }
}

extension NotificationStoreError {
    /// A failed connection attempt, said in libpq's terms: which TLS check failed, or what the server answered.
    init(connecting error: any Error, operation: String, configuration: NotificationStoreConfiguration) {
        let endpoint = configuration.endpoint
        let prefix = "\(operation) failed: cannot connect to PostgreSQL at \(endpoint)"
        let psql = error as? PSQLError
        let underlying = psql?.underlying.map { String(describing: $0) } ?? String(describing: error)
        let roots = configuration.rootCertificates.map { "a CA in sslrootcert \($0.path)" } ?? "a CA the system trusts"
        if psql?.code == .sslUnsupported {
            self.init(
                code: .unavailable,
                reason: "\(prefix): the server does not offer TLS, which sslmode=\(configuration.tls) requires"
            )
        } else if underlying.contains("failedToValidateHostname") {
            var host = "\(endpoint)"
            if case .tcp(let name, _) = endpoint { host = name }
            self.init(
                code: .unavailable,
                reason: "\(prefix): the server's certificate does not name the host \(host) (sslmode=verify-full)",
                context: underlying
            )
        } else if underlying.contains("CERTIFICATE_VERIFY_FAILED") || underlying.contains("certificate verify failed") {
            self.init(
                code: .unavailable,
                reason: "\(prefix): the server's certificate is not signed by \(roots) (sslmode=\(configuration.tls))",
                context: underlying
            )
        } else {
            self.init(classifying: error, operation: operation, endpoint: endpoint)
        }
    }
}
