import PostgresNIO
import PostgresRuntime

extension NotificationStoreError {
    /// Classifies any error a store operation threw: the store's own as it is; PostgreSQL's as the runtime classified
    /// it (``PostgresFailure``), code for code, a row no body partition holds as ``Code/bodyPartitionMissing``.
    init(classifying error: any Error, operation: String, endpoint: NotificationStoreConfiguration.Endpoint) {
        if let error = error as? NotificationStoreError {
            self = error
            return
        }
        let failure =
            PostgresFailure(classifying: error, operation: operation, endpoint: endpoint)
            ?? PostgresFailure(unknown: error, operation: operation, endpoint: endpoint)
        // The server found no partition of `notification_bodies` for a row: SQLSTATE 23514 like a check constraint,
        // but naming the table and no constraint (and in any `lc_messages` language).
        if failure.sqlState == "23514", failure.tableName == "notification_bodies", failure.constraintName == nil {
            self.init(
                code: .bodyPartitionMissing,
                reason: "\(operation) failed: no partition of notification_bodies holds a body's month",
                sqlState: failure.sqlState,
                context: failure.context
            )
            return
        }
        // The runtime's kinds are the store's codes by name.
        self.init(
            code: Code(rawValue: failure.kind.rawValue) ?? .queryFailed,
            reason: failure.reason,
            sqlState: failure.sqlState,
            context: failure.context
        )
    }

    /// Whether the server found no partition of `notification_bodies` for a row (see
    /// ``init(classifying:operation:endpoint:)``).
    static func isMissingBodyPartition(_ error: PSQLError) -> Bool {
        error.serverInfo?[.sqlState] == "23514" && error.serverInfo?[.tableName] == "notification_bodies"
            && error.serverInfo?[.constraintName] == nil
    }
}
