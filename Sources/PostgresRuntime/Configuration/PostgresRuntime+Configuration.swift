import NIOCore
import NIOSSL
import PostgresNIO

extension PostgresRuntime {
    /// What the runtime connects to and how: ``PostgresConfiguration``, resolved (TLS files read). Turned into
    /// postgres-nio's configurations here alone, the pool's and a single connection's alike.
    package struct Configuration: Sendable {
        /// Where a PostgreSQL server listens.
        package enum Endpoint: Sendable, Hashable, CustomStringConvertible {
            /// A TCP host and port.
            case tcp(host: String, port: Int)
            /// A Unix domain socket file, for example `/var/run/postgresql/.s.PGSQL.5432`.
            case unixSocket(path: String)

            package var description: String {
                switch self {
                case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
                case .unixSocket(let path): path
                }
            }
        }

        /// TLS as postgres-nio takes it.
        package enum TLS: Sendable {
            case disable
            /// TLS when the server offers it.
            case prefer(TLSConfiguration)
            /// TLS always.
            case require(TLSConfiguration)
        }

        package var endpoint: Endpoint
        package var username: String
        package var password: String?
        package var database: String
        package var tls: TLS
        /// libpq's name of the TLS mode (`sslmode`), for messages.
        package var tlsMode: String
        /// The trusted CAs, for messages: "a CA in sslrootcert <path>" or "a CA the system trusts".
        package var trustedRoots: String
        package var maximumConnections: Int
        package var connectTimeout: Duration
        package var operationTimeout: Duration
        /// The `application_name` in `pg_stat_activity`.
        package var applicationName: String

        package init(
            endpoint: Endpoint,
            username: String,
            password: String?,
            database: String,
            tls: TLS,
            tlsMode: String,
            trustedRoots: String,
            maximumConnections: Int,
            connectTimeout: Duration,
            operationTimeout: Duration,
            applicationName: String
        ) {
            self.endpoint = endpoint
            self.username = username
            self.password = password
            self.database = database
            self.tls = tls
            self.tlsMode = tlsMode
            self.trustedRoots = trustedRoots
            self.maximumConnections = maximumConnections
            self.connectTimeout = connectTimeout
            self.operationTimeout = operationTimeout
            self.applicationName = applicationName
        }

        /// What every session starts with: its name in `pg_stat_activity`, and UTC as its `TimeZone`.
        ///
        /// The server's own zone is whatever `initdb` took from its machine (America/New_York, Europe/Berlin, ...),
        /// and SQL such as `timestamptz + interval '1 month'` or `date_trunc` on a `timestamptz` is computed in the
        /// session's zone: a body partition bounded that way missed or overlapped its UTC month around daylight-saving
        /// changes. A startup parameter rather than `SET`: PgBouncer (transaction pooling) keeps it per client, a
        /// `SET` would leak to whichever client gets the server connection next.
        package var startupParameters: [(String, String)] {
            [("application_name", applicationName), ("TimeZone", "UTC")]
        }

        /// The pool's configuration; also what a benchmark's plain postgres-nio client is given, to compare with.
        package var clientConfiguration: PostgresClient.Configuration {
            var configuration: PostgresClient.Configuration
            switch (endpoint, tls) {
            case (.tcp(let host, let port), let tls):
                let clientTLS: PostgresClient.Configuration.TLS =
                    switch tls {
                    case .disable: .disable
                    case .prefer(let configuration): .prefer(configuration)
                    case .require(let configuration): .require(configuration)
                    }
                configuration = PostgresClient.Configuration(
                    host: host,
                    port: port,
                    username: username,
                    password: password,
                    database: database,
                    tls: clientTLS
                )
            case (.unixSocket(let path), _):
                configuration = PostgresClient.Configuration(
                    unixSocketPath: path,
                    username: username,
                    password: password,
                    database: database
                )
            }
            configuration.options.maximumConnections = maximumConnections
            configuration.options.connectTimeout = connectTimeout
            configuration.options.additionalStartupParameters = startupParameters
            PostgresNIOWorkarounds.adjust(&configuration.options)
            return configuration
        }

        /// One connection's configuration, as the pool makes them (``clientConfiguration``): to ask a server directly.
        func connectionConfiguration() throws -> PostgresConnection.Configuration {
            var connection: PostgresConnection.Configuration
            switch endpoint {
            case .tcp(let host, let port):
                let connectionTLS: PostgresConnection.Configuration.TLS =
                    switch tls {
                    case .disable: .disable
                    case .prefer(let configuration): .prefer(try NIOSSLContext(configuration: configuration))
                    case .require(let configuration): .require(try NIOSSLContext(configuration: configuration))
                    }
                connection = PostgresConnection.Configuration(
                    host: host,
                    port: port,
                    username: username,
                    password: password,
                    database: database,
                    tls: connectionTLS
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
}
