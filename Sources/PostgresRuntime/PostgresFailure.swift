import NIOCore
import PostgresNIO

/// A failure of an operation on PostgreSQL, classified: whether the server is away, a transaction conflicted, the
/// schema is not ready, ... (``Kind``). The store turns it into its own error, code for code.
///
/// ``reason`` never contains row data or secrets; PostgreSQL's own words go to ``context``.
package struct PostgresFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong; the raw values are the store's error codes.
    package enum Kind: String, Sendable, Hashable {
        case unavailable = "UNAVAILABLE"
        case timedOut = "TIMED_OUT"
        case conflict = "CONFLICT"
        case schemaNotReady = "SCHEMA_NOT_READY"
        case migrationFailed = "MIGRATION_FAILED"
        case invalidConfiguration = "INVALID_CONFIGURATION"
        case authenticationFailed = "AUTHENTICATION_FAILED"
        case queryFailed = "QUERY_FAILED"
        case rolledBack = "ROLLED_BACK"
        case shutDown = "SHUT_DOWN"
    }

    package var kind: Kind
    package var reason: String
    /// PostgreSQL's SQLSTATE, when the server reported the failure.
    package var sqlState: String?
    package var context: String?
    /// The table and constraint the server named, if any (a row refused by a partitioned table names no constraint).
    package var tableName: String?
    package var constraintName: String?

    package init(
        _ kind: Kind,
        reason: String,
        sqlState: String? = nil,
        context: String? = nil,
        tableName: String? = nil,
        constraintName: String? = nil
    ) {
        self.kind = kind
        self.reason = reason
        self.sqlState = sqlState
        self.context = context
        self.tableName = tableName
        self.constraintName = constraintName
    }

    package var description: String { "\(kind.rawValue): \(reason)" }

    /// Classifies an error a PostgreSQL operation threw; nil for an error that is not PostgreSQL's or postgres-nio's
    /// (the operation's own), which the caller classifies.
    package init?(classifying error: any Error, operation: String, endpoint: PostgresRuntime.Configuration.Endpoint) {
        if let error = error as? PostgresFailure {
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
            self.init(.shutDown, reason: "\(operation) was cancelled")
            return
        }
        if error is PostgresDecodingError {
            self.init(
                .queryFailed,
                reason: "\(operation) failed: a result column had an unexpected type",
                context: String(describing: error)
            )
            return
        }
        guard let error = error as? PSQLError else { return nil }
        if let sqlState = error.serverInfo?[.sqlState] {
            let message = error.serverInfo?[.message] ?? "no message"
            let detail = error.serverInfo?[.detail].map { "; \($0)" } ?? ""
            self.init(
                Self.kind(forSQLState: sqlState),
                reason: "\(operation) failed: \(Self.explanation(forSQLState: sqlState))",
                sqlState: sqlState,
                context: message + detail,
                tableName: error.serverInfo?[.tableName],
                constraintName: error.serverInfo?[.constraintName]
            )
            return
        }
        let kind: Kind =
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
            kind,
            reason: "\(operation) failed: \(error.code) (PostgreSQL at \(endpoint))",
            context: error.underlying.map { String(describing: $0) }
        )
    }

    /// An error that is neither PostgreSQL's nor the operation's own: the connection failed somewhere below.
    package init(unknown error: any Error, operation: String, endpoint: PostgresRuntime.Configuration.Endpoint) {
        self.init(
            .unavailable,
            reason: "\(operation) failed: cannot talk to PostgreSQL at \(endpoint)",
            context: String(describing: error)
        )
    }

    /// Whether a SQLSTATE is about one row's data (a value out of range, a constraint): permanent for that row,
    /// harmless for the others.
    package static func isRowDataError(sqlState: String) -> Bool {
        sqlState.hasPrefix("22") || sqlState.hasPrefix("23") || sqlState == "54000"
    }

    /// Whether a SQLSTATE is a conflict with another transaction (serialization, deadlock, lock not available):
    /// the same statement succeeds when run again.
    package static func isConflict(sqlState: String) -> Bool {
        ["40001", "40P01", "55P03"].contains(sqlState)
    }

    private static func kind(forSQLState sqlState: String) -> Kind {
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
        switch kind(forSQLState: sqlState) {
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
