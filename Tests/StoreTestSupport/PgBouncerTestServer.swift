import AppStoreTestSupport
import Foundation
import LocalPostgres

/// Debian's PgBouncer, run from a configuration file the test hands over (the production overlay's, with the lines a
/// test host needs changed), listening on 127.0.0.1 on a free port. As root it runs as `postgres`: PgBouncer refuses
/// to run as root.
package final class PgBouncerTestServer: Sendable {
    /// The TCP port on 127.0.0.1.
    package let port: Int
    /// Holds the configuration, the pid file and the log.
    package let directory: String

    private init(port: Int, directory: String) {
        self.port = port
        self.directory = directory
    }

    /// Starts PgBouncer with `configuration` (an INI text) after setting its listening address, port, pid file and
    /// log; returns once the daemon has started (its listening socket is open before it detaches).
    package static func start(configuration: INIFile) async throws -> PgBouncerTestServer {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("asnp-pgbouncer-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let server = PgBouncerTestServer(port: try LoopbackPort.free(), directory: directory)
        var configuration = configuration
        configuration.set("pgbouncer", "listen_addr", "127.0.0.1")
        configuration.set("pgbouncer", "listen_port", "\(server.port)")
        configuration.set("pgbouncer", "pidfile", directory + "/pgbouncer.pid")
        configuration.set("pgbouncer", "logfile", directory + "/pgbouncer.log")
        try Data(configuration.text.utf8).write(to: URL(fileURLWithPath: directory + "/pgbouncer.ini"))
        try await LocalPostgresServer.offPool {
            if LocalPostgresServer.isRoot {
                _ = try LocalPostgresServer.run("/bin/chown", ["-R", "postgres:postgres", directory])
            }
            try LocalPostgresServer.runAsServerUser(try binary(), ["-d", directory + "/pgbouncer.ini"])
        }
        return server
    }

    /// Everything PgBouncer logged so far (to explain a failure).
    package var log: String {
        (try? String(contentsOfFile: directory + "/pgbouncer.log", encoding: .utf8)) ?? ""
    }

    /// Stops PgBouncer (SIGTERM: at once, as a pod's end would) and removes its directory.
    package func stop() {
        if let text = try? String(contentsOfFile: directory + "/pgbouncer.pid", encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGTERM)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Debian installs it in /usr/sbin, which a non-root PATH may lack.
    private static func binary() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin"]
        where FileManager.default.isExecutableFile(atPath: directory + "/pgbouncer") {
            return directory + "/pgbouncer"
        }
        throw LocalPostgresError(.programMissing, "pgbouncer not found: install it (apt-get install pgbouncer)")
    }
}
