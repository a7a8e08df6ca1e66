import AppStoreTestSupport
import Foundation
import LocalPostgres
import NotificationStore
import PostgresRuntime

/// A throwaway PostgreSQL server for tests: Debian's `initdb` and `pg_ctl` into a temporary directory, listening
/// on 127.0.0.1 on a free port, trusting every local connection. Run as root, it runs the server as `postgres`.
///
/// Tests share ``shared()`` and each takes a fresh database from ``makeDatabase()``; a test that stops the server
/// starts its own with ``start()``. Every server is stopped and its directory removed when the test process exits, one
/// that failed to start included.
///
/// The programs (`initdb`, `pg_ctl`, `psql`) run on threads of their own, never on the concurrency pool: on a
/// 2-core machine the pool has two threads, and a test blocking them would stall every other test running.
package final class TestPostgresServer: Sendable {
    /// The TCP port on 127.0.0.1.
    package let port: Int
    /// The data directory (also holding the Unix socket and the server log).
    package let directory: String

    private let server: LocalPostgresServer

    /// The servers' time zone: not UTC, with daylight-saving time (its month ends shift by an hour).
    package static let timeZone = "America/New_York"

    private init(port: Int, directory: String) {
        self.port = port
        self.directory = directory
        server = LocalPostgresServer(directory: directory, port: port)
    }

    /// The server most tests share, started on first use.
    package static func shared() async throws -> TestPostgresServer {
        try await sharedServer.get()
    }

    private static let sharedServer = SharedServer()

    /// Starts a new server; `prepare` runs on the initialized data directory before it starts (certificate files,
    /// `pg_hba.conf`), `settings` are passed as `-c name=value`.
    package static func start(
        settings: [String: String] = [:],
        prepare: @escaping @Sendable (_ dataDirectory: String) throws -> Void = { _ in }
    ) async throws -> TestPostgresServer {
        try await LocalPostgresServer.offPool { try startBlocking(settings: settings, prepare: prepare) }
    }

    private static func startBlocking(
        settings: [String: String],
        prepare: (String) throws -> Void
    ) throws -> TestPostgresServer {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("asnp-postgres-\(UUID().uuidString.prefix(8))").path
        let server = TestPostgresServer(port: try LoopbackPort.free(), directory: directory)
        // From here on, so that a server that fails to start leaves no directory behind either.
        registerForExit(server)
        try server.server.initialize()
        // Suites run side by side, each store's pool keeping up to 8 connections for a minute after use, and psql
        // sessions on top: PostgreSQL's default of 100 was seen exhausted ("too many clients") on a busy machine.
        // In postgresql.conf, so that a restart keeps it.
        // A time zone with daylight-saving time, as `initdb` takes from many servers' machines: every store, worker
        // and pipeline test then shows that nothing depends on the server's zone (a UTC server hid that the body
        // partitions' bounds did).
        let configuration = server.server.dataDirectory + "/postgresql.conf"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: configuration))
        try handle.seekToEnd()
        try handle.write(
            contentsOf: Data("\nmax_connections = 400\ntimezone = '\(Self.timeZone)'\n".utf8)
        )
        try handle.close()
        try prepare(server.server.dataDirectory)
        if geteuid() == 0 {
            _ = try LocalPostgresServer.run("/bin/chown", ["-R", "postgres:postgres", server.server.dataDirectory])
        }
        try server.server.start(durable: false, settings: settings)
        return server
    }

    /// Stops the server (fast shutdown: open connections are closed, as in a real outage).
    package func stop() async throws {
        try await LocalPostgresServer.offPool { try self.stopBlocking() }
    }

    private func stopBlocking() throws {
        try server.stop()
    }

    /// Starts the server again on the same port with the same data.
    package func restart() async throws {
        try await LocalPostgresServer.offPool { try self.server.start(durable: false) }
    }

    /// Creates an empty database and returns settings for a store using it.
    package func makeDatabase(name: String = "test_\(UUID().uuidString.prefix(12).lowercased().filter(\.isLetter))")
        async throws -> NotificationStoreConfiguration
    {
        let name = name + "_\(Self.counter.next())"
        try await psql("postgres", "CREATE DATABASE \(name)")
        return configuration(database: name)
    }

    /// The libpq-style URL of `database` on this server, as the commands take it (`--database-url`, `DATABASE_URL`).
    package func url(database: String = "postgres") -> String {
        "postgres://postgres@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// Settings for a store using `database` on this server.
    package func configuration(database: String) -> NotificationStoreConfiguration {
        var configuration = NotificationStoreConfiguration(
            endpoint: .tcp(host: "127.0.0.1", port: port),
            username: "postgres",
            database: database,
            tls: .disable
        )
        // Generous: a full run on a fresh CI machine saw a healthy 37-row write take more than 10 s, and a fresh
        // clone with a busy core saw schema 6's migration and a row-by-row write pass 30 s. Tests that expect
        // TIMED_OUT set their own.
        configuration.operationTimeout = .seconds(60)
        return configuration
    }

    /// Backs `database` up with `pg_dump` (custom format) into a file, whose path is returned: a backup taken while
    /// the pipeline runs, to ``restore(_:from:)`` later.
    package func dump(_ database: String) async throws -> String {
        let path = directory + "/\(database)-\(UUID().uuidString.prefix(8)).dump"
        _ = try await LocalPostgresServer.offPool {
            try LocalPostgresServer.run(
                try LocalPostgresServer.binary("pg_dump"),
                ["-h", "127.0.0.1", "-p", "\(self.port)", "-U", "postgres", "-Fc", "-f", path, database]
            )
        }
        return path
    }

    /// Replaces `database` with what `dump` holds, as restoring a backup replaces a server's data: restored into a
    /// database of its own, then swapped in, every connection to the old one ended (clients reconnect to the restored
    /// one; in between they find no database).
    package func restore(_ database: String, from dump: String) async throws {
        let restored = "\(database)_restored"
        try await psql("postgres", "CREATE DATABASE \(restored)")
        _ = try await LocalPostgresServer.offPool {
            try LocalPostgresServer.run(
                try LocalPostgresServer.binary("pg_restore"),
                ["-h", "127.0.0.1", "-p", "\(self.port)", "-U", "postgres", "-d", restored, dump]
            )
        }
        try await psql("postgres", "DROP DATABASE \(database) WITH (FORCE)")
        try await psql("postgres", "ALTER DATABASE \(restored) RENAME TO \(database)")
    }

    /// Runs SQL through `psql` (an independent client) and returns its unaligned, tuples-only output, trimmed.
    @discardableResult
    package func psql(_ database: String, _ sql: String) async throws -> String {
        try await LocalPostgresServer.offPool { try self.psqlBlocking(database, sql) }
    }

    private func psqlBlocking(_ database: String, _ sql: String) throws -> String {
        try server.psql(database, sql)
    }

    private static let counter = Counter()

    private static let started = LockedList()

    private static func registerForExit(_ server: TestPostgresServer) {
        if started.append(server) == 1 {
            atexit {
                for server in TestPostgresServer.started.all {
                    try? server.server.stop(mode: "immediate")
                    try? FileManager.default.removeItem(atPath: server.directory)
                }
            }
        }
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

private final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var servers: [TestPostgresServer] = []
    func append(_ server: TestPostgresServer) -> Int {
        lock.withLock {
            servers.append(server)
            return servers.count
        }
    }
    var all: [TestPostgresServer] { lock.withLock { servers } }
}

/// Starts the shared server once, whoever asks first.
private actor SharedServer {
    private var starting: Task<TestPostgresServer, any Error>?

    func get() async throws -> TestPostgresServer {
        if let starting { return try await starting.value }
        let task = Task { try await TestPostgresServer.start() }
        starting = task
        do {
            return try await task.value
        } catch {
            // The next test starts another instead of every test failing on this one's start.
            starting = nil
            throw error
        }
    }
}
