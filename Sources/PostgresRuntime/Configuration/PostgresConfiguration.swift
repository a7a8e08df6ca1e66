/// PostgreSQL connection settings: where the server is, how many connections, how long to wait, TLS as libpq means it.
/// They know no table: the store is configured with them (`NotificationStoreConfiguration` is this type), and they
/// become the runtime's ``PostgresRuntime/Configuration`` through ``runtimeConfiguration``.
///
/// Most deployments give a URL (``init(url:)``), in libpq's form, so the same string works with `psql`.
package struct PostgresConfiguration: Sendable {
    /// Where the server listens.
    package var endpoint: Endpoint
    /// The role to connect as.
    package var username: String
    /// The role's password, if the server asks for one.
    package var password: String?
    /// The database to open.
    package var database: String
    /// Whether and how to use TLS (libpq's `sslmode`). Default: ``TLSMode/prefer``.
    package var tls: TLSMode
    /// The CAs to trust (libpq's `sslrootcert`); nil trusts the system's.
    package var rootCertificates: RootCertificates?
    /// A client certificate to present (libpq's `sslcert`, `sslkey`).
    package var clientCertificate: ClientCertificate?
    /// The most connections the pool opens. Each concurrent batch write holds one. Default: 8.
    package var maximumConnections: Int
    /// How long a connection attempt may take. Default: 5 seconds.
    package var connectTimeout: Duration
    /// How long one operation may take, waiting for a connection included. A write that times out was
    /// rolled back (or is rolled back by the server when the connection closes) and fails as retriable.
    /// Default: 30 seconds.
    package var operationTimeout: Duration
    /// The `application_name` the server shows in `pg_stat_activity`. Default: `asnp`.
    package var applicationName: String
    /// Whether the store's batch write is a named prepared statement, parsed and planned once per connection (about
    /// half of PostgreSQL's time per batch). Turn it off behind a pooler that cannot carry prepared statements across
    /// transactions (PgBouncer in transaction mode before 1.21, or with `max_prepared_statements = 0`).
    /// Default: true.
    package var usesPreparedStatements: Bool

    /// Creates settings for a server reached over TCP or a Unix socket.
    package init(
        endpoint: Endpoint,
        username: String,
        password: String? = nil,
        database: String,
        tls: TLSMode = .prefer
    ) {
        self.endpoint = endpoint
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
        self.maximumConnections = 8
        self.connectTimeout = .seconds(5)
        self.operationTimeout = .seconds(30)
        self.applicationName = "asnp"
        self.usesPreparedStatements = true
    }
}

extension PostgresConfiguration {
    /// Where a PostgreSQL server listens: a TCP host and port, or a Unix domain socket file.
    package typealias Endpoint = PostgresRuntime.Configuration.Endpoint

    /// libpq's `sslmode`, all but `allow` (plain first, TLS if refused), which PostgresNIO cannot do.
    package struct TLSMode: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable, Hashable {
            case disable, prefer, require
            case verifyCA = "verify-ca"
            case verifyFull = "verify-full"
        }

        let base: Base

        /// Plain TCP.
        package static let disable = TLSMode(base: .disable)
        /// TLS when the server offers it, without checking its certificate (libpq's default).
        package static let prefer = TLSMode(base: .prefer)
        /// TLS always, without checking the server's certificate unless a root certificate file is given (then as
        /// `verify-ca`, like libpq's `require`).
        package static let require = TLSMode(base: .require)
        /// TLS always; the certificate must chain to a trusted root (``rootCertificates`` or the system's).
        package static let verifyCA = TLSMode(base: .verifyCA)
        /// TLS always; the certificate must chain to a trusted root and name the host.
        package static let verifyFull = TLSMode(base: .verifyFull)

        /// The mode named as libpq names it (`disable`, `prefer`, `require`, `verify-ca`, `verify-full`), or nil.
        package init?(sslmode: String) {
            guard let base = Base(rawValue: sslmode) else { return nil }
            self.base = base
        }

        private init(base: Base) {
            self.base = base
        }

        /// libpq's name for the mode.
        package var description: String { base.rawValue }
    }
}

extension PostgresConfiguration {
    /// The runtime's configuration: these settings with the TLS files read. The one place they become what
    /// postgres-nio is told (``PostgresRuntime/Configuration``).
    package var runtimeConfiguration: PostgresRuntime.Configuration {
        let runtimeTLS: PostgresRuntime.Configuration.TLS =
            switch tlsConfiguration {
            case nil: .disable
            case let configuration? where tls == .prefer: .prefer(configuration)
            case let configuration?: .require(configuration)
            }
        return PostgresRuntime.Configuration(
            endpoint: endpoint,
            username: username,
            password: password,
            database: database,
            tls: runtimeTLS,
            tlsMode: "\(tls)",
            trustedRoots: rootCertificates.map { "a CA in sslrootcert \($0.path)" } ?? "a CA the system trusts",
            maximumConnections: maximumConnections,
            connectTimeout: connectTimeout,
            operationTimeout: operationTimeout,
            applicationName: applicationName
        )
    }
}
