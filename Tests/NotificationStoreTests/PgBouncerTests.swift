import AppStoreTestSupport
import Foundation
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

/// The production overlay's PgBouncer (Deploy/kubernetes/overlays/production/pgbouncer.ini), run by Debian's
/// PgBouncer in front of a real PostgreSQL over TLS: what asnp does through it in transaction pooling.
@Suite(
    "Through the production overlay's PgBouncer: transaction pooling, TLS verify-full to PostgreSQL",
    .tags(.process)
)
struct PgBouncerTests {
    static let configurationPath = "Deploy/kubernetes/overlays/production/pgbouncer.ini"

    @Test(
        """
        many pooled clients share a server pool of two: the migration and concurrent batch writes (COPY and UNNEST, \
        without prepared statements, as the overlay's settings say) store the scenario exactly as directly, and \
        PostgreSQL sees at most the pool's connections, all over TLS
        """
    )
    func transactionPooling() async throws {
        let postgres = try await TLSTestServer.start()
        let database = "asnp"
        try await postgres.server.psql("postgres", "CREATE ROLE asnp LOGIN PASSWORD 'pooled-secret'")
        try await postgres.server.psql("postgres", "CREATE DATABASE \(database) OWNER asnp")

        // The overlay's file, but for what a test host changes: where PostgreSQL is (named `localhost`, as its
        // certificate says), the files from the Secret, and a pool small enough to see the sharing.
        let serverPoolSize = 2
        var configuration = try INIFile(contentsOfFile: Fixtures.packageRoot.path + "/" + Self.configurationPath)
        #expect(configuration.value("pgbouncer", "pool_mode") == "transaction")
        #expect(configuration.value("pgbouncer", "server_tls_sslmode") == "verify-full")
        let secrets = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-pgbouncer-secrets-\(UUID())")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: secrets) }
        let userlist = secrets.appendingPathComponent("pgbouncer-userlist")
        try Data("\"asnp\" \"pooled-secret\"\n".utf8).write(to: userlist)
        try configuration.replace(
            "databases",
            database,
            "host=localhost port=\(postgres.server.port) dbname=\(database)"
        )
        try configuration.replace("pgbouncer", "auth_file", userlist.path)
        try configuration.replace("pgbouncer", "server_tls_ca_file", postgres.caPath)
        try configuration.replace("pgbouncer", "default_pool_size", "\(serverPoolSize)")
        try configuration.replace("pgbouncer", "max_db_connections", "\(serverPoolSize)")
        let bouncer = try await PgBouncerTestServer.start(configuration: configuration)
        defer { bouncer.stop() }

        // Three stores (three pods), eight connections each, one of them writing with COPY.
        let url = "postgres://asnp:pooled-secret@127.0.0.1:\(bouncer.port)/\(database)?sslmode=disable"
        var storeConfiguration = try NotificationStoreConfiguration(url: url)
        storeConfiguration.usesPreparedStatements = false
        storeConfiguration.maximumConnections = 8
        // 24 writers queue behind two server connections: on a busy core the last one waits well past 30 s.
        storeConfiguration.operationTimeout = .seconds(60)
        let entries = try await StoreFixtures.scenarioEntries()
        let writers = 24
        try await withStore(storeConfiguration) { _ in }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                let configuration = storeConfiguration
                group.addTask {
                    try await withStore(configuration, migrate: false) { store in
                        try await withThrowingTaskGroup(of: Void.self) { writes in
                            let perStore = writers / 3
                            for writer in 0..<perStore {
                                // Each store writes every entry twice, in two of its concurrent batches.
                                let batch = entries.enumerated().filter {
                                    [writer, (writer + 1) % perStore].contains($0.offset % perStore)
                                }
                                writes.addTask {
                                    _ = try await store.write(NotificationBatch(entries: batch.map(\.element)))
                                }
                            }
                            try await writes.waitForAll()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }

        #expect(
            try await postgres.server.psql(database, "SELECT count(*) FROM notifications")
                == "\(Set(try StoreFixtures.scenario().map(\.uuid)).count)",
            "\(bouncer.log)"
        )
        #expect(try await StoreFixtures.finalTypes(postgres.server, database) == StoreFixtures.scenarioFinal())
        // PgBouncer keeps its server connections open: what PostgreSQL sees now is all it ever opened for asnp.
        let serverConnections = try await postgres.server.psql(
            "postgres",
            """
            SELECT count(*) || ' ' || bool_and(ssl) FROM pg_stat_activity JOIN pg_stat_ssl USING (pid)
            WHERE usename = 'asnp'
            """
        ).split(separator: " ")
        let opened = try #require(Int(serverConnections[0]))
        #expect(opened >= 1 && opened <= serverPoolSize, "PostgreSQL saw \(opened) connections of asnp")
        #expect(serverConnections.last == "true", "a server connection without TLS")
    }
}
