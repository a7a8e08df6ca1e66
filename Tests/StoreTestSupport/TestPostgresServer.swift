import AppStoreTestSupport
import Foundation
import NotificationStore

/// A throwaway PostgreSQL server for tests: Debian's `initdb` and `pg_ctl` into a temporary directory, listening
/// on 127.0.0.1 on a free port, trusting every local connection. Run as root, it runs the server as `postgres`.
///
/// Tests share ``shared()`` and each takes a fresh database from ``makeDatabase()``; a test that stops the server
/// starts its own with ``start()``. Every server started is stopped when the test process exits.
///
/// The programs (`initdb`, `pg_ctl`, `psql`) run on threads of their own, never on the concurrency pool: on a
/// 2-core machine the pool has two threads, and a test blocking them would stall every other test running.
public final class TestPostgresServer: Sendable {
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The data directory (also holding the Unix socket and the server log).
    public let directory: String

    private init(port: Int, directory: String) {
        self.port = port
        self.directory = directory
    }

    /// The server most tests share, started on first use.
    public static func shared() async throws -> TestPostgresServer {
        try await sharedServer.get()
    }

    private static let sharedServer = SharedServer()

    /// Starts a new server.
    public static func start() async throws -> TestPostgresServer {
        try await offPool { try startBlocking() }
    }

    private static func startBlocking() throws -> TestPostgresServer {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("asnp-postgres-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let server = TestPostgresServer(port: try LoopbackPort.free(), directory: directory)
        if isRoot {
            try run("/bin/chown", ["postgres:postgres", directory])
        }
        try server.asServerUser(
            try binary("initdb"),
            ["-D", directory + "/data", "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"]
        )
        try server.startServer()
        registerForExit(server)
        return server
    }

    /// Stops the server (fast shutdown: open connections are closed, as in a real outage).
    public func stop() async throws {
        try await Self.offPool { try self.stopBlocking() }
    }

    private func stopBlocking() throws {
        try asServerUser(try Self.binary("pg_ctl"), ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
    }

    /// Starts the server again on the same port with the same data.
    public func restart() async throws {
        try await Self.offPool { try self.startServer() }
    }

    /// Creates an empty database and returns settings for a store using it.
    public func makeDatabase(name: String = "test_\(UUID().uuidString.prefix(12).lowercased().filter(\.isLetter))")
        async throws -> NotificationStoreConfiguration
    {
        let name = name + "_\(Self.counter.next())"
        try await psql("postgres", "CREATE DATABASE \(name)")
        return configuration(database: name)
    }

    /// Settings for a store using `database` on this server.
    public func configuration(database: String) -> NotificationStoreConfiguration {
        var configuration = NotificationStoreConfiguration(
            endpoint: .tcp(host: "127.0.0.1", port: port),
            username: "postgres",
            database: database,
            tls: .disable
        )
        configuration.operationTimeout = .seconds(10)
        return configuration
    }

    /// Runs SQL through `psql` (an independent client) and returns its unaligned, tuples-only output, trimmed.
    @discardableResult
    public func psql(_ database: String, _ sql: String) async throws -> String {
        try await Self.offPool { try self.psqlBlocking(database, sql) }
    }

    private func psqlBlocking(_ database: String, _ sql: String) throws -> String {
        try Self.run(
            try Self.binary("psql"),
            [
                "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d",
                database, "-c", sql,
            ]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func startServer() throws {
        try asServerUser(
            try Self.binary("pg_ctl"),
            [
                "-D", directory + "/data", "-l", directory + "/server.log", "-w", "-o",
                "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
                    + "-c full_page_writes=off", "start",
            ]
        )
    }

    private func asServerUser(_ program: String, _ arguments: [String]) throws {
        if Self.isRoot {
            let command = ([program] + arguments).map(Self.shellQuoted).joined(separator: " ")
            try Self.run("/bin/su", ["postgres", "-s", "/bin/sh", "-c", command])
        } else {
            try Self.run(program, arguments)
        }
    }

    private static let isRoot = getuid() == 0

    /// Runs blocking work on a thread of its own and waits for it without holding a pool thread.
    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A PostgreSQL program: from Debian's versioned directory (newest first), else from PATH.
    static func binary(_ name: String) throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/\(name)") {
            return "\(root)/\(version)/bin/\(name)"
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        throw TestPostgresError("\(name) not found: install PostgreSQL (apt-get install postgresql)")
    }

    /// Runs a program to completion and returns its standard output.
    ///
    /// posix_spawn and waitpid rather than Foundation's Process, whose exit monitoring was seen to miss the exit
    /// of `su … pg_ctl start` (which leaves a daemon behind); output goes through files for the same reason.
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-run-\(UUID().uuidString)")
        let outputPath = base.path + ".out"
        let errorPath = base.path + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw TestPostgresError("cannot start \(program): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // Exited normally with status 0.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw TestPostgresError(
                "\(program) \(arguments.joined(separator: " ")) failed (wait status \(status)): "
                    + ((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "") + output
            )
        }
        return output
    }

    private static let counter = Counter()

    private static let started = LockedList()

    private static func registerForExit(_ server: TestPostgresServer) {
        if started.append(server) == 1 {
            atexit {
                for server in TestPostgresServer.started.all {
                    try? server.asServerUser(
                        try TestPostgresServer.binary("pg_ctl"),
                        ["-D", server.directory + "/data", "-m", "immediate", "-w", "stop"]
                    )
                    try? FileManager.default.removeItem(atPath: server.directory)
                }
            }
        }
    }
}

/// A test PostgreSQL server could not be set up.
public struct TestPostgresError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
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
        return try await task.value
    }
}
