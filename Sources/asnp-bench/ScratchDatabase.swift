import Logging
import NotificationStore
import PostgresRuntime

/// A database of its own on the server a benchmark was pointed at: created for one run and dropped afterwards,
/// whether the run succeeds or fails, so a benchmark never writes into the database it was given.
enum ScratchDatabase {
    /// Creates `<prefix>_<random>` on `server`, runs `body` with the configuration for it, then drops it (ending any
    /// connection still open to it).
    static func with<Result>(
        on server: NotificationStoreConfiguration,
        prefix: String,
        logger: Logger,
        _ body: (NotificationStoreConfiguration) async throws -> Result
    ) async throws -> Result {
        let name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        try await execute("CREATE DATABASE \(name)", on: server, logger: logger)
        var scratch = server
        scratch.database = name
        let result: Result
        do {
            result = try await body(scratch)
        } catch {
            try? await execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", on: server, logger: logger)
            throw error
        }
        try await execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", on: server, logger: logger)
        return result
    }

    private static func execute(_ sql: String, on server: NotificationStoreConfiguration, logger: Logger) async throws {
        _ = try await NotificationStore.withRunning(configuration: server, logger: logger) {
            try await $0.execute(sql)
        }
    }
}
