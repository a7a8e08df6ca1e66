import PostgresNIO

extension PostgresConnection {
    /// Whether `error` left this connection able to run `ROLLBACK`.
    ///
    /// Not after the connection went (closed, a FATAL server error such as `pg_terminate_backend`'s): the server
    /// aborted the transaction already, and postgres-nio 1.33.2 may never answer a statement sent on a connection
    /// that is closing, which held a failed write until its deadline (a test caught it).
    func canRollBack(after error: any Error) -> Bool {
        guard !isClosed else { return false }
        guard let error = error as? PSQLError else { return true }
        switch error.code {
        case .server:
            let severity = error.serverInfo?[.severity] ?? error.serverInfo?[.localizedSeverity]
            return severity != "FATAL" && severity != "PANIC"
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown,
            .messageDecodingFailure, .unexpectedBackendMessage:
            return false
        default:
            return true
        }
    }
}
