import ChildProcesses
import Foundation

/// A PostgreSQL server run from Debian's programs (`initdb`, `pg_ctl`, `psql`) in a directory of its own, listening
/// on 127.0.0.1 and trusting local connections: for `asnp dev` and the tests, never for production.
///
/// Started as root, the programs run as the `postgres` user (PostgreSQL refuses to run as root) and the directory is
/// given to it. The programs run synchronously: call these methods off Swift's concurrency pool.
package final class LocalPostgresServer: Sendable {
    /// Holds `data/` (the cluster), the Unix socket and `server.log`.
    package let directory: String
    /// The TCP port on 127.0.0.1.
    package let port: Int

    /// A server kept in `directory`, listening on `port` once started.
    package init(directory: String, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// The cluster's data directory.
    package var dataDirectory: String { directory + "/data" }

    /// Whether `initdb` already ran here.
    package var isInitialized: Bool { FileManager.default.fileExists(atPath: dataDirectory + "/PG_VERSION") }

    /// Whether a server runs on this data directory (`pg_ctl status`).
    package var isRunning: Bool {
        (try? Self.runAsServerUser(try Self.binary("pg_ctl"), ["-D", dataDirectory, "status"])) != nil
    }

    /// Creates the directory and the cluster (user `postgres`, trust authentication, UTF-8, C locale), unless it
    /// exists already.
    package func initialize() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if Self.isRoot {
            try Self.run("/bin/chown", ["-R", "postgres:postgres", directory])
        }
        guard !isInitialized else { return }
        try Self.runAsServerUser(
            try Self.binary("initdb"),
            ["-D", dataDirectory, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"]
        )
    }

    /// Starts the server and waits until it accepts connections. `durable: false` turns off fsync and full-page
    /// writes (tests: faster, and a crash may corrupt the cluster). `settings` are further server settings
    /// (`-c name=value`), e.g. `ssl=on`.
    package func start(durable: Bool, settings: [String: String] = [:]) throws {
        var options = "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1"
        if !durable { options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off" }
        for (name, value) in settings.sorted(by: { $0.key < $1.key }) { options += " -c \(name)=\(value)" }
        do {
            try Self.runAsServerUser(
                try Self.binary("pg_ctl"),
                ["-D", dataDirectory, "-l", directory + "/server.log", "-w", "-o", options, "start"]
            )
        } catch var error as LocalPostgresError {
            // pg_ctl only says to examine the log: the reason is in its last lines.
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            error.reason += "; server.log ends: " + log.split(separator: "\n").suffix(5).joined(separator: " | ")
            throw error
        }
    }

    /// Stops the server: `fast` closes open connections and shuts down cleanly, `immediate` as a crash would.
    package func stop(mode: String = "fast") throws {
        try Self.runAsServerUser(try Self.binary("pg_ctl"), ["-D", dataDirectory, "-m", mode, "-w", "stop"])
    }

    /// Runs SQL through `psql` and returns its unaligned, tuples-only output, trimmed.
    @discardableResult
    package func psql(_ database: String, _ sql: String) throws -> String {
        try Self.run(
            try Self.binary("psql"),
            [
                "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d",
                database, "-c", sql,
            ]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Creates `name` unless it exists.
    package func createDatabaseIfMissing(_ name: String) throws {
        let exists = try psql("postgres", "SELECT 1 FROM pg_database WHERE datname = '\(name)'")
        if exists != "1" { try psql("postgres", "CREATE DATABASE \(name)") }
    }

    /// Runs a program as the server's user: `postgres` when this process runs as root (PostgreSQL, like PgBouncer,
    /// refuses to run as root), else this process's own user.
    package static func runAsServerUser(_ program: String, _ arguments: [String]) throws {
        if Self.isRoot {
            let command = ([program] + arguments).map(Self.shellQuoted).joined(separator: " ")
            try Self.run("/bin/su", ["postgres", "-s", "/bin/sh", "-c", command])
        } else {
            try Self.run(program, arguments)
        }
    }

    /// Runs `work` (these methods block for as long as the programs run) on a thread of its own and waits for it
    /// without holding one of Swift's few concurrency-pool threads.
    package static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// Whether this process runs as root.
    package static let isRoot = getuid() == 0

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A PostgreSQL program: from Debian's versioned directory (newest first), else from PATH.
    package static func binary(_ name: String) throws -> String {
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
        throw LocalPostgresError(.programMissing, "\(name) not found: install PostgreSQL (apt-get install postgresql)")
    }

    /// Runs a program to completion and returns its standard output.
    ///
    /// A ``ChildProcess`` rather than Foundation's Process, whose exit monitoring was seen to miss the exit of
    /// `su … pg_ctl start` (which leaves a daemon behind); output goes through files for the same reason. Nothing
    /// else of ours goes to the child: `pg_ctl start` leaves a server running, which would otherwise hold every
    /// descriptor open at that moment (other children's output pipes, listening sockets) for as long as it runs,
    /// and a reader waiting for such a pipe's end would wait for the server to stop.
    @discardableResult
    package static func run(_ program: String, _ arguments: [String]) throws -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-run-\(UUID().uuidString)")
        let outputPath = base.path + ".out"
        let errorPath = base.path + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: program,
                arguments: arguments,
                standardOutput: .file(outputPath),
                standardError: .file(errorPath)
            )
        } catch {
            throw LocalPostgresError(.spawnFailed, "\(error)")
        }
        let status = child.waitForExit()
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard child.terminationReason == .exit, status == 0 else {
            let ending = child.terminationReason == .exit ? "exit status \(status)" : "signal \(status)"
            throw LocalPostgresError(
                .programFailed,
                "\(program) \(arguments.joined(separator: " ")) failed (\(ending)): "
                    + ((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "") + output
            )
        }
        return output
    }
}

/// A local PostgreSQL server could not be set up or run.
package struct LocalPostgresError: Error, CustomStringConvertible {
    /// What went wrong, as a stable identifier.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `PROGRAM_MISSING`.
        package var description: String { rawValue }

        /// A PostgreSQL program (initdb, pg_ctl, psql) is not installed.
        case programMissing = "PROGRAM_MISSING"
        /// A program could not be started.
        case spawnFailed = "SPAWN_FAILED"
        /// A program exited with a failure; the reason carries its output.
        case programFailed = "PROGRAM_FAILED"
    }

    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation: the program, and what it said.
    package var reason: String

    package init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `CODE: reason`.
    package var description: String { "\(code): \(reason)" }
}
