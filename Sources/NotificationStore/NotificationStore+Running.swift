import Logging

extension NotificationStore {
    /// Runs `body` with a store whose connection pool runs for exactly that long: for one-shot commands and tests.
    /// Long-lived programs put the store in their `ServiceGroup` instead.
    package static func withRunning<Result: Sendable>(
        configuration: NotificationStoreConfiguration,
        logger: Logger,
        _ body: (NotificationStore) async throws -> Result
    ) async throws -> Result {
        let store = NotificationStore(configuration: configuration, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            // Started at once, so that the pool's task is queued before `body`'s first operation and, in practice,
            // runs before it leases a connection (else postgres-nio warns that run() was not called yet, and the
            // lease waits).
            #if compiler(>=6.2)
            group.addImmediateTask { try await store.run() }
            #else
            group.addTask { try await store.run() }
            #endif
            defer { group.cancelAll() }
            return try await body(store)
        }
    }
}
