import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import Foundation
import KafkaClient
import Logging
import PostgresNIO
import PostgresRuntime
import StoreTestSupport
import Synchronization
import Testing

@testable import NotificationStore

@Suite("Faults: concurrent writers, a stopped server, rows PostgreSQL refuses", .tags(.fault))
struct StoreFaultTests {
    /// The tables' contents that must not depend on who wrote what when.
    private func snapshot(_ server: TestPostgresServer, _ database: String) async throws -> [String] {
        [
            try await server.psql(
                database,
                "SELECT string_agg(notification_uuid::text, ',' ORDER BY notification_uuid) FROM notifications"
            ),
            try await server.psql(
                database,
                """
                SELECT string_agg(concat_ws('|', original_transaction_id, last_notification_uuid,
                    last_notification_type, last_signed_date, expires_date, auto_renew_status), ','
                    ORDER BY original_transaction_id)
                FROM subscriptions
                """
            ),
            try await server.psql(database, "SELECT count(*) FROM outbox WHERE stream = 'decoded'"),
        ]
    }

    /// Runs `body` while another session holds an exclusive lock on `table`, then lets the lock go.
    private static func holdingLock(
        on table: String,
        server: TestPostgresServer,
        database: String,
        _ body: @Sendable () async throws -> Void
    ) async throws {
        let locker = PostgresClient(
            configuration: .init(
                host: "127.0.0.1",
                port: server.port,
                username: "postgres",
                password: nil,
                database: database,
                tls: .disable
            )
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await locker.run() }
            defer { group.cancelAll() }
            try await locker.withConnection { connection in
                try await connection.query("BEGIN", logger: connection.logger)
                try await connection.query(
                    "LOCK TABLE \(unescaped: table) IN ACCESS EXCLUSIVE MODE",
                    logger: connection.logger
                )
                try await body()
                try await connection.query("ROLLBACK", logger: connection.logger)
            }
        }
    }

    @Test("two writers with overlapping batches end where one writer ends")
    func concurrentWriters() async throws {
        let entries = try await StoreFixtures.scenarioEntries()
        let (server, single) = try await makeDatabase()
        try await withStore(single) { store in
            _ = try await store.write(NotificationBatch(entries: entries))
        }
        let (_, shared) = try await makeDatabase()
        try await withStore(shared) { _ in }
        var generator = SeededGenerator(seed: 7)
        let orders = [entries.shuffled(using: &generator), entries.shuffled(using: &generator)]
        let stored = try await withThrowingTaskGroup(of: Int.self) { group in
            for order in orders {
                group.addTask {
                    try await withStore(shared, migrate: false) { store in
                        var stored = 0
                        for start in stride(from: 0, to: order.count, by: 4) {
                            let batch = NotificationBatch(entries: Array(order[start..<min(start + 4, order.count)]))
                            stored += try await store.write(batch).storedNotifications.count
                        }
                        return stored
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(try await snapshot(server, shared.database) == snapshot(server, single.database))
        // Each notification was new to exactly one of the writers.
        #expect(stored == Set(try StoreFixtures.scenario().map(\.uuid)).count)
    }

    @Test("server stopped: a retriable error, nothing half-written; the same batch after the restart completes")
    func serverStopped() async throws {
        let server = try await TestPostgresServer.start()
        let database = try await server.makeDatabase()
        let entries = try await StoreFixtures.scenarioEntries()
        let firstHalf = NotificationBatch(entries: Array(entries.prefix(entries.count / 2)))
        let secondHalf = NotificationBatch(entries: Array(entries.suffix(from: entries.count / 2)))
        // Migrate and write the first half with the default timeout: on a loaded machine the first write to a fresh
        // server took more than the short one below (3 s, then 10 s, timed out a busy fresh-clone run).
        try await withStore(database) { store in _ = try await store.write(firstHalf) }
        // Short enough that a write to the stopped server ends soon. The connect timeout stays the default: connecting
        // to a stopped server on loopback is refused at once, and a 1 s limit could time out connections to the
        // running one on a loaded machine.
        var settings = database
        settings.operationTimeout = .seconds(10)
        let configuration = settings
        try await withStore(configuration, migrate: false) { store in
            // A connection in the pool when the server goes away. A slow machine running the whole suite once took
            // longer than the short timeout for a new pool's first query: the check is the setting, not the subject,
            // so it is tried again (a server that is really down fails all the tries).
            var pooled = false
            for _ in 0..<6 where !pooled {
                do {
                    try await store.checkSchema()
                    pooled = true
                } catch let error as NotificationStoreError where error.code == .timedOut {
                    continue
                }
            }
            try #require(pooled, "the running server answers within 6 tries of the short timeout")
            try await server.stop()
            let error = await #expect(throws: NotificationStoreError.self) { try await store.write(secondHalf) }
            #expect(error?.isRetriable == true, "\(String(describing: error))")
            #expect([.unavailable, .timedOut].contains(error?.code))
            try await server.restart()
            // The pool reconnects by itself; the worker writes the same batch again until it succeeds.
            var result: BatchWriteResult?
            for _ in 0..<20 where result == nil {
                do {
                    result = try await store.write(secondHalf)
                } catch let error as NotificationStoreError where error.isRetriable {
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
            #expect(result != nil)
        }
        let (_, reference) = try await makeDatabase()
        try await withStore(reference) { store in
            _ = try await store.write(NotificationBatch(entries: entries))
        }
        let shared = try await TestPostgresServer.shared()
        #expect(try await snapshot(server, configuration.database) == snapshot(shared, reference.database))
    }

    @Test("a transaction whose connection dies mid-way leaves nothing of the batch, and fails as retriable")
    func atomic() async throws {
        let (server, configuration) = try await makeDatabase()
        let entries = try await StoreFixtures.scenarioEntries()
        try await withStore(configuration) { store in
            // Another session holds a lock the batch needs, so the batch's transaction stops mid-way.
            try await Self.holdingLock(on: "subscriptions", server: server, database: configuration.database) {
                let write = Task { try await store.write(NotificationBatch(entries: entries)) }
                let waiting = """
                    SELECT pid FROM pg_stat_activity
                    WHERE datname = current_database() AND application_name = 'asnp' AND wait_event_type = 'Lock'
                    """
                var backend = ""
                for _ in 0..<100 where backend.isEmpty {
                    try await Task.sleep(for: .milliseconds(50))
                    backend = try await server.psql(configuration.database, waiting)
                }
                #expect(!backend.isEmpty)
                // The batch statement is mid-way, its transaction open; now its connection dies.
                try await server.psql(configuration.database, "SELECT pg_terminate_backend(\(backend))")
                let error = await #expect(throws: NotificationStoreError.self) { try await write.value }
                #expect(error?.isRetriable == true, "\(String(describing: error))")
            }
        }
        #expect(try await server.psql(configuration.database, "SELECT count(*) FROM notifications") == "0")
        #expect(try await server.psql(configuration.database, "SELECT count(*) FROM outbox") == "0")
    }

    @Test("a statement that failed unseen: the COMMIT PostgreSQL answers with ROLLBACK is ROLLED_BACK, not success")
    func unreadStatementErrorFailsTheCommit() async throws {
        let (server, configuration) = try await makeDatabase()
        try await withStore(configuration) { store in
            let error = await #expect(throws: NotificationStoreError.self) {
                try await store.inTransaction("probing") { connection in
                    try await connection.query("CREATE TABLE rolled_back_probe (id int)", logger: connection.logger)
                    // Its error comes with its rows, which nobody reads: the transaction has failed unseen.
                    _ = try await connection.query(
                        "SELECT 1 / g FROM generate_series(0, 0) AS g",
                        logger: connection.logger
                    )
                }
            }
            #expect(error?.code == .rolledBack)
            #expect(error?.isRetriable == true, "\(String(describing: error))")
        }
        #expect(try await server.psql(configuration.database, "SELECT to_regclass('rolled_back_probe')") == "")
    }

    /// A statement sent after the server ended the connection (the transaction's ROLLBACK) was never answered by
    /// postgres-nio 1.33.2, which held a failed write until its deadline; the store no longer sends one.
    @Test(
        "the server ends the connection during a batch's statement: a retriable error before the deadline, nothing written"
    )
    func backendTerminatedDuringWrite() async throws {
        let (server, database) = try await makeDatabase()
        let entries = try await StoreFixtures.scenarioEntries()
        let large = NotificationBatch(entries: Array(repeating: entries, count: 10).flatMap { $0 })
        // A deadline far beyond the write's time even in a loaded debug run: reaching it means a hang.
        var settings = database
        settings.operationTimeout = .seconds(60)
        let statement = "WITH stored_headers AS%"
        try await withStore(settings) { store in
            // A server-side loop, so no statement is too short to be seen: it ends the batch's large statement.
            let killer = Task {
                try await server.psql(
                    database.database,
                    """
                    DO $$
                    DECLARE victim int;
                    BEGIN
                      WHILE clock_timestamp() < now() + interval '60 seconds' LOOP
                        PERFORM pg_stat_clear_snapshot();
                        SELECT pid INTO victim FROM pg_stat_activity
                        WHERE datname = current_database() AND application_name = 'asnp'
                          AND state = 'active' AND query LIKE '\(statement)';
                        IF victim IS NOT NULL THEN
                          PERFORM pg_terminate_backend(victim);
                          RETURN;
                        END IF;
                        PERFORM pg_sleep(0.0005);
                      END LOOP;
                    END $$
                    """
                )
            }
            let watching = """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE 'DO $$%' AND state = 'active'
                """
            var watchers = "0"
            for _ in 0..<200 where watchers == "0" {
                watchers = try await server.psql(database.database, watching)
            }
            #expect(watchers == "1")
            let error = await #expect(throws: NotificationStoreError.self) { try await store.write(large) }
            #expect(error?.isRetriable == true, "\(String(describing: error))")
            #expect(error?.code != .timedOut, "the operation hung until its deadline: \(String(describing: error))")
            _ = try await killer.value
            #expect(try await server.psql(database.database, "SELECT count(*) FROM notifications") == "0")
            // The pool goes on with a new connection.
            let result = try await store.write(NotificationBatch(entries: entries))
            #expect(!result.storedNotifications.isEmpty)
            #expect(
                try await server.psql(database.database, "SELECT count(*) FROM notifications")
                    == String(result.storedNotifications.count)
            )
        }
    }

    @Test("a statement that never returns (a lock held elsewhere): TIMED_OUT at the deadline, nothing written")
    func deadline() async throws {
        let (server, database) = try await makeDatabase()
        var settings = database
        settings.operationTimeout = .seconds(1)
        let configuration = settings
        let entries = try await StoreFixtures.scenarioEntries()
        // Migrate with the default timeout: a loaded machine may need more than a second for that.
        try await withStore(database) { _ in }
        try await withStore(configuration, migrate: false) { store in
            try await Self.holdingLock(on: "notifications", server: server, database: configuration.database) {
                let start = ContinuousClock.now
                let error = await #expect(throws: NotificationStoreError.self) {
                    try await store.write(NotificationBatch(entries: entries))
                }
                #expect(error?.code == .timedOut)
                #expect(error?.isRetriable == true, "\(String(describing: error))")
                // Without the deadline the write would wait for the lock forever; the bound is loose because a
                // loaded machine (CI) answers slowly (12.8 s seen with a build running beside the tests).
                #expect(ContinuousClock.now - start < .seconds(30))
            }
        }
        // The abandoned session ends its transaction by itself (its connection was closed), committing nothing.
        let sessions =
            "SELECT string_agg(state || ':' || coalesce(wait_event, '-'), ',') FROM pg_stat_activity "
            + "WHERE datname = current_database() AND application_name = 'asnp' AND state <> 'idle'"
        var remaining = try await server.psql(configuration.database, sessions)
        for _ in 0..<100 where !remaining.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            remaining = try await server.psql(configuration.database, sessions)
        }
        #expect(remaining.isEmpty, "sessions left: \(remaining)")
        #expect(try await server.psql(configuration.database, "SELECT count(*) FROM notifications") == "0")
        let result = try await withStore(database, migrate: false) { store in
            try await store.write(NotificationBatch(entries: entries))
        }
        #expect(result.storedNotifications.count == Set(try StoreFixtures.scenario().map(\.uuid)).count)
    }

    @Test("a notification PostgreSQL refuses goes to rejected as UNSTORABLE; the rest of the batch is stored")
    func unstorable() async throws {
        let (server, configuration) = try await makeDatabase()
        let entries = try await StoreFixtures.scenarioEntries()
        guard case .verified(.v2(var poisoned)) = entries[0].verdict else {
            Issue.record("the fixture did not verify")
            return
        }
        // Caught before the server: a NUL character, which PostgreSQL text cannot hold.
        poisoned.transactionInfo?.productId = "pro\u{0}duct"
        poisoned.payload.notificationUUID = UUID().uuidString
        var nulEntry = entries[0]
        nulEntry.verdict = .verified(.v2(poisoned))
        nulEntry.raw.source.offset = 900
        // Refused by the server: a constraint this database enforces.
        let refusedKey = try StoreFixtures.scenario()[3].key
        try await withStore(configuration) { _ in }
        try await server.psql(
            configuration.database,
            "ALTER TABLE notifications ADD CONSTRAINT test_refuse CHECK (original_transaction_id <> '\(refusedKey)')"
        )
        let batch = NotificationBatch(entries: entries + [nulEntry])
        let result = try await withStore(configuration, migrate: false) { try await $0.write(batch) }
        let scenario = try StoreFixtures.scenario()
        let refusedLines = scenario.filter { $0.key == refusedKey }
        #expect(result.unstorableNotifications == 1 + refusedLines.count)
        #expect(
            result.storedNotifications.count
                == Set(scenario.map(\.uuid)).count - Set(refusedLines.map(\.uuid)).count
        )
        let rejected = try await server.psql(
            configuration.database,
            "SELECT string_agg(status || ':' || reason, '\n' ORDER BY kafka_offset) FROM rejected_notifications"
        )
        #expect(rejected.contains("a NUL character"))
        #expect(rejected.contains("test_refuse"))
        // Set aside with what the worker consumed: the headers and key of the raw message, for a replay.
        #expect(
            try await server.psql(
                configuration.database,
                """
                SELECT DISTINCT headers->>'version' || ' ' || (outbox.message_key LIKE 'key-%')
                FROM rejected_notifications JOIN outbox ON outbox.rejected_id = rejected_notifications.id
                WHERE reason LIKE '%test_refuse%'
                """
            ) == "2 true"
        )
        #expect(
            try await server.psql(
                configuration.database,
                "SELECT count(*) FROM notifications WHERE original_transaction_id = '\(refusedKey)'"
            ) == "0"
        )
        #expect(try await server.psql(configuration.database, "SELECT count(*) FROM subscriptions") == "11")
    }
}
