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
            group.addTask { try await store.run() }
            defer { group.cancelAll() }
            return try await body(store)
        }
    }
}
