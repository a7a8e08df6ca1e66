import AppStoreTestSupport

/// Rows locked by a session of its own (psql: a statement that locks them, then asleep in its transaction) until
/// released: every transaction that writes them waits for it meanwhile.
package struct HeldRowLock: Sendable {
    package let server: TestPostgresServer
    package let database: String
    private let session: Task<String, any Error>

    /// The holding session, found by its sleep.
    private static let holder =
        "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()"

    /// Locks the subscription row of `originalTransactionId`.
    package static func take(
        originalTransactionId: String,
        server: TestPostgresServer,
        database: String
    ) async throws -> HeldRowLock? {
        try await take(
            "SELECT 1 FROM subscriptions WHERE original_transaction_id = '\(originalTransactionId)' FOR UPDATE",
            server: server,
            database: database
        )
    }

    /// Runs `statement` in a transaction that then sleeps; returns once the session holds its locks (a fixed wait
    /// could end before psql had connected), nil if it never did.
    package static func take(_ statement: String, server: TestPostgresServer, database: String) async throws
        -> HeldRowLock?
    {
        let session = Task {
            try await server.psql(database, "BEGIN; \(statement); SELECT pg_sleep(600); COMMIT;")
        }
        let lock = HeldRowLock(server: server, database: database, session: session)
        guard try await eventually({ try await lock.isHeld() }) else {
            session.cancel()
            return nil
        }
        return lock
    }

    /// Whether the session still holds the lock.
    package func isHeld() async throws -> Bool {
        try await server.psql(database, Self.holder).isEmpty == false
    }

    /// Ends the holding session, which releases the lock (and rolls its transaction back).
    package func release() async throws {
        try await server.psql(database, "SELECT pg_terminate_backend(pid) FROM (\(Self.holder)) AS holder")
        _ = try? await session.value  // its session ends with an error, which is the point
    }

    /// How many sessions of the database wait for a lock.
    package static func waiting(server: TestPostgresServer, database: String) async throws -> Int {
        Int(
            try await server.psql(
                database,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        ) ?? -1
    }
}
