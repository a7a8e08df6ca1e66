import NIOCore
import PostgresNIO

extension NotificationStoreError {
    /// Classifies any error a store operation threw: retriable (server away, conflict, timeout) or not.
    init(classifying error: any Error, operation: String, endpoint: NotificationStoreConfiguration.Endpoint) {
        if let error = error as? NotificationStoreError {
            self = error
            return
        }
        if let error = error as? PostgresTransactionError,
            let inner = error.closureError ?? error.beginError ?? error.commitError
        {
            self.init(classifying: inner, operation: operation, endpoint: endpoint)
            return
        }
        if error is CancellationError {
            self.init(code: .shutDown, reason: "\(operation) was cancelled")
            return
        }
        if error is PostgresDecodingError {
            self.init(
                code: .queryFailed,
                reason: "\(operation) failed: a result column had an unexpected type",
                context: String(describing: error)
            )
            return
        }
        guard let error = error as? PSQLError else {
            self.init(
                code: .unavailable,
                reason: "\(operation) failed: cannot talk to PostgreSQL at \(endpoint)",
                context: String(describing: error)
            )
            return
        }
        if Self.isMissingBodyPartition(error) {
            self.init(
                code: .bodyPartitionMissing,
                reason: "\(operation) failed: no partition of notification_bodies holds a body's month",
                sqlState: error.serverInfo?[.sqlState],
                context: error.serverInfo?[.message]
            )
            return
        }
        if let sqlState = error.serverInfo?[.sqlState] {
            let message = error.serverInfo?[.message] ?? "no message"
            let detail = error.serverInfo?[.detail].map { "; \($0)" } ?? ""
            self.init(
                code: Self.code(forSQLState: sqlState),
                reason: "\(operation) failed: \(Self.explanation(forSQLState: sqlState))",
                sqlState: sqlState,
                context: message + detail
            )
            return
        }
        let code: Code =
            switch error.code {
            case .poolClosed: .shutDown
            case .queryCancelled: .timedOut
            // clientClosedConnection also reports a connection the server ended while idle (a restart, 57P01).
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown,
                .sslUnsupported, .failedToAddSSLHandler:
                .unavailable
            case .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError: .authenticationFailed
            default: .queryFailed
            }
        self.init(
            code: code,
            reason: "\(operation) failed: \(error.code) (PostgreSQL at \(endpoint))",
            context: error.underlying.map { String(describing: $0) }
        )
    }

    /// Whether a SQLSTATE is about one row's data (a value out of range, a constraint): permanent for that row,
    /// harmless for the others.
    static func isRowDataError(sqlState: String) -> Bool {
        sqlState.hasPrefix("22") || sqlState.hasPrefix("23") || sqlState == "54000"
    }

    /// Whether the server found no partition of `notification_bodies` for a row: SQLSTATE 23514 like a check
    /// constraint, but naming the table and no constraint (and in any `lc_messages` language).
    static func isMissingBodyPartition(_ error: PSQLError) -> Bool {
        error.serverInfo?[.sqlState] == "23514" && error.serverInfo?[.tableName] == "notification_bodies"
            && error.serverInfo?[.constraintName] == nil
    }

    /// Whether a SQLSTATE is a conflict with another transaction (serialization, deadlock, lock not available):
    /// the same statement succeeds when run again.
    static func isConflict(sqlState: String) -> Bool {
        ["40001", "40P01", "55P03"].contains(sqlState)
    }

    private static func code(forSQLState sqlState: String) -> Code {
        switch sqlState {
        case _ where isConflict(sqlState: sqlState): .conflict
        // A read-only transaction: the server is a standby now (a failover in progress).
        case "25006": .unavailable
        case "57014": .timedOut
        case "3D000": .authenticationFailed
        case "42P01", "42703", "42883", "3F000": .schemaNotReady
        default:
            switch sqlState.prefix(2) {
            case "08", "53", "57", "58": .unavailable
            case "28": .authenticationFailed
            default: .queryFailed
            }
        }
    }

    private static func explanation(forSQLState sqlState: String) -> String {
        switch code(forSQLState: sqlState) {
        case .conflict: "a concurrent transaction conflicted (deadlock, serialization failure, or a lock held too long)"
        case .timedOut: "the server cancelled the statement"
        case .authenticationFailed: "the server refused the role or the database"
        case .schemaNotReady: "the schema is missing or too old; run `asnp migrate`"
        case .unavailable: "the server is unavailable (shutting down, starting, out of resources)"
        default:
            isRowDataError(sqlState: sqlState) ? "a value was refused" : "the server refused the statement"
        }
    }
}
