import AppStoreTestSupport
import Foundation
import NotificationSchema
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

@Suite("asnp migrate", .tags(.process))
struct MigrateCommandTests {
    @Test("applies the schema once, reports nothing to apply the second time; --check passes after")
    func migrates() async throws {
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase().database
        let url = server.url(database: database)

        let check = try await ASNPProcess.run(["migrate", "--check", "--database-url", url])
        #expect(check.status == 3)
        #expect(check.standardError.contains("SCHEMA_NOT_READY"))
        #expect(check.standardError.contains("asnp migrate"))

        let first = try await ASNPProcess.run(["migrate", "--database-url", url])
        #expect(first.status == 0, "\(first.standardError)")
        let applied = [
            "1 (initial schema)", "2 (replay marks on rejected notifications)",
            "3 (outbox rows set aside after a permanent refusal)",
            "4 (environment, bundle id and app Apple id of every V2 shape)",
            "5 (subscription status and entitlement)", "6 (raw bodies and decoded JSON packed, in monthly partitions)",
            "7 (history ledger and failed deliveries)", "8 (subscription state rules)",
            "9 (history listed notifications)", "10 (body partitions bounded by UTC months in any session time zone)",
            "11 (partition owners)", "12 (outbox rows keep their trace context)",
        ]
        let expected = "schema at version 12: applied " + applied.joined(separator: ", ")
        #expect(first.standardOutput.contains(expected), "\(first.standardOutput)")
        let second = try await ASNPProcess.run(["migrate", "--database-url", url])
        #expect(second.status == 0)
        #expect(second.standardOutput.contains("nothing to apply"))
        #expect(try await ASNPProcess.run(["migrate", "--check", "--database-url", url]).status == 0)
        #expect(
            try await server.psql(database, "SELECT count(*) FROM asnp_schema_migrations")
                == String(SchemaMigration.all.count)
        )
    }

    @Test(
        """
        over TLS from the command line: verify-full with the server's CA as sslrootcert migrates; another CA and a \
        host the certificate does not name exit 3 saying which
        """
    )
    func verifyFull() async throws {
        let tls = try await TLSTestServer.start()
        let database = try await tls.server.makeDatabase().database
        let migrated = try await ASNPProcess.run([
            "migrate", "--database-url", tls.url(database: database, "sslmode=verify-full&sslrootcert=\(tls.caPath)"),
        ])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("schema at version \(SchemaMigration.latestVersion)"))
        // The same from the settings the services read: the URL in a secret file naming no TLS, the TLS settings.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-migrate-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let urlFile = directory.appendingPathComponent("database-url")
        try Data(tls.url(database: database, "application_name=migrate").utf8).write(to: urlFile)
        let settings = directory.appendingPathComponent("settings.json")
        try Data(
            #"{"database": {"urlFile": "\#(urlFile.path)", "sslMode": "verify-full", "sslRootCert": "\#(tls.caPath)"}}"#
                .utf8
        ).write(to: settings)
        let fromSettings = try await ASNPProcess.run(["migrate", "--config", settings.path])
        #expect(fromSettings.status == 0, "\(fromSettings.standardError)")
        #expect(fromSettings.standardOutput.contains("sslmode=verify-full&sslrootcert=\(tls.caPath)"))
        #expect(fromSettings.standardOutput.contains("nothing to apply"))
        // Refusals are waited for one operation's timeout (the pool retries them), then explained.
        let otherCA = try await ASNPProcess.run([
            "migrate", "--database-timeout", "2", "--database-url",
            tls.url(database: database, "sslmode=verify-full&sslrootcert=\(tls.otherCAPath)"),
        ])
        #expect(otherCA.status == 3)
        #expect(
            otherCA.standardError.contains("not signed by a CA in sslrootcert \(tls.otherCAPath)"),
            "\(otherCA.standardError)"
        )
        let wrongHost = try await ASNPProcess.run([
            "migrate", "--database-timeout", "2", "--database-url",
            tls.url(host: "127.0.0.1", database: database, "sslmode=verify-full&sslrootcert=\(tls.caPath)"),
        ])
        #expect(wrongHost.status == 3)
        #expect(wrongHost.standardError.contains("does not name the host 127.0.0.1"), "\(wrongHost.standardError)")
    }

    @Test(
        "--check --wait holds until another process migrated the schema (an init container's wait); alone, a usage error"
    )
    func checkWaits() async throws {
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase().database
        let url = server.url(database: database)
        async let waited = ASNPProcess.run(["migrate", "--check", "--wait", "120", "--database-url", url])
        // The wait is under way (nothing migrated it yet) when the migration runs.
        while try await server.psql(database, "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)'")
            == "0"
        {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try await ASNPProcess.run(["migrate", "--database-url", url]).status == 0)
        let check = try await waited
        #expect(check.status == 0, "\(check.standardError)")
        #expect(check.standardOutput.contains("schema current at version \(SchemaMigration.latestVersion)"))
        #expect(try await ASNPProcess.run(["migrate", "--wait", "5", "--database-url", url]).status == 2)
    }

    @Test("a server that is not there: exit 3 and a retriable error naming the address, promptly")
    func unreachable() async throws {
        let url = "postgres://postgres:hunter2@127.0.0.1:1/asnp?sslmode=disable"
        let result = try await ASNPProcess.run(["migrate", "--database-url", url, "--database-timeout", "2"])
        #expect(result.status == 3)
        #expect(result.standardError.contains("127.0.0.1:1"))
        #expect(!result.standardError.contains("hunter2"))
    }

    @Test("a malformed URL is a usage error")
    func malformedURL() async throws {
        let result = try await ASNPProcess.run(["migrate", "--database-url", "postgres://nobody"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("database URL"))
    }
}
