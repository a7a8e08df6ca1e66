import PostgresNIO

extension PostgresRuntime {
    /// Why no connection can be made, found by making one directly (the pool retries failed connections until the
    /// operation times out and keeps their errors to itself); nil when one can be made.
    func connectionFailure(operation: String) async -> PostgresFailure? {
        let connectionConfiguration: PostgresConnection.Configuration
        do {
            connectionConfiguration = try configuration.connectionConfiguration()
        } catch {
            return PostgresFailure(
                .invalidConfiguration,
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
            return PostgresFailure(connecting: error, operation: operation, configuration: configuration)
        }
    }
}

extension PostgresFailure {
    /// A failed connection attempt, said in libpq's terms: which TLS check failed, or what the server answered.
    init(connecting error: any Error, operation: String, configuration: PostgresRuntime.Configuration) {
        let endpoint = configuration.endpoint
        let prefix = "\(operation) failed: cannot connect to PostgreSQL at \(endpoint)"
        let psql = error as? PSQLError
        let underlying = psql?.underlying.map { String(describing: $0) } ?? String(describing: error)
        if psql?.code == .sslUnsupported {
            self.init(
                .unavailable,
                reason: "\(prefix): the server does not offer TLS, which sslmode=\(configuration.tlsMode) requires"
            )
        } else if underlying.contains("failedToValidateHostname") {
            var host = "\(endpoint)"
            if case .tcp(let name, _) = endpoint { host = name }
            self.init(
                .unavailable,
                reason: "\(prefix): the server's certificate does not name the host \(host) (sslmode=verify-full)",
                context: underlying
            )
        } else if underlying.contains("CERTIFICATE_VERIFY_FAILED") || underlying.contains("certificate verify failed") {
            self.init(
                .unavailable,
                reason:
                    "\(prefix): the server's certificate is not signed by \(configuration.trustedRoots) "
                    + "(sslmode=\(configuration.tlsMode))",
                context: underlying
            )
        } else {
            self =
                PostgresFailure(classifying: error, operation: operation, endpoint: endpoint)
                ?? PostgresFailure(unknown: error, operation: operation, endpoint: endpoint)
        }
    }
}
