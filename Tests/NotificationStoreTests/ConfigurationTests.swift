import AppStoreTestSupport
import NotificationStore
import PostgresRuntime
import Testing

@Suite("Store configuration", .tags(.fast))
struct ConfigurationTests {
    @Test("a libpq URL: user, password, host, port, database, sslmode, application name")
    func url() throws {
        let configuration = try NotificationStoreConfiguration(
            url: "postgres://asnp:p%40ss@db.example.com:6432/notifications?sslmode=require&application_name=worker"
        )
        #expect(configuration.endpoint == .tcp(host: "db.example.com", port: 6432))
        #expect(configuration.username == "asnp")
        #expect(configuration.password == "p@ss")
        #expect(configuration.database == "notifications")
        #expect(configuration.tls == .require)
        #expect(configuration.applicationName == "worker")
        #expect(!configuration.redactedURL.contains("p@ss"))
        #expect(
            configuration.redactedURL == "postgres://asnp:<redacted>@db.example.com:6432/notifications?sslmode=require"
        )
    }

    @Test("a Unix socket directory, and defaults: port 5432, sslmode prefer")
    func socket() throws {
        let configuration = try NotificationStoreConfiguration(
            url: "postgresql://postgres@/asnp?host=/var/run/postgresql"
        )
        #expect(configuration.endpoint == .unixSocket(path: "/var/run/postgresql/.s.PGSQL.5432"))
        #expect(configuration.tls == .prefer)
        #expect(configuration.password == nil)
        #expect(configuration.redactedURL == "postgres://postgres@:5432/asnp?host=/var/run/postgresql&sslmode=prefer")
    }

    @Test(
        "malformed URLs name what is wrong, never the password",
        arguments: [
            ("mysql://u@h/db", "expected postgres://"),
            ("postgres://h/db", "no user name"),
            ("postgres://u:secret@h", "no database name"),
            ("postgres://u:secret@h/db?sslmode=maybe", "sslmode 'maybe'"),
            ("postgres://u:secret@h/db?sslcert=x", "sslcert and sslkey go together"),
            (
                "postgres://u:secret@h/db?sslrootcert=/nonexistent/ca.pem",
                "sslrootcert /nonexistent/ca.pem cannot be read"
            ),
            ("postgres://u:secret@h/db?sslcompression=1", "unsupported parameter 'sslcompression'"),
        ]
    )
    func malformed(url: String, expected: String) {
        let error = #expect(throws: PostgresConfigurationError.self) { try NotificationStoreConfiguration(url: url) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.description.contains(expected) == true)
        #expect(error?.description.contains("secret") == false)
    }
}
