import AppStoreTestSupport
import StoreTestSupport

/// A subscription's row locked by a session of its own (psql: `SELECT ... FOR UPDATE`, then asleep) until released:
/// every transaction that writes the row waits for it meanwhile.
struct SubscriptionRowLock {
    let server: TestPostgresServer
    let database: String
    private let session: Task<String, any Error>

    /// The holding session, found by its sleep.
    private static let holder =
        "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()"

    /// Locks the row of `originalTransactionId`; returns once the session holds the lock (a fixed wait could end
    /// before psql had connected), nil if it never did.
    static func take(
        originalTransactionId: String,
        server: TestPostgresServer,
        database: String
    ) async throws -> SubscriptionRowLock? {
        let session = Task {
            try await server.psql(
                database,
                "BEGIN; SELECT 1 FROM subscriptions WHERE original_transaction_id = '\(originalTransactionId)' "
                    + "FOR UPDATE; SELECT pg_sleep(600); COMMIT;"
            )
        }
        let lock = SubscriptionRowLock(server: server, database: database, session: session)
        guard try await eventually({ try await lock.isHeld() }) else {
            session.cancel()
            return nil
        }
        return lock
    }

    /// Whether the session still holds the lock.
    func isHeld() async throws -> Bool {
        try await server.psql(database, Self.holder).isEmpty == false
    }

    /// Ends the holding session, which releases the lock.
    func release() async throws {
        try await server.psql(database, "SELECT pg_terminate_backend(pid) FROM (\(Self.holder)) AS holder")
        _ = try? await session.value  // its session ends with an error, which is the point
    }
}
