import Logging
import PostgresNIO

/// Every defect of postgres-nio 1.33.2 the runtime works around, in one place; each names what it does and how it was
/// seen. Revisit them when postgres-nio is upgraded past 1.33.2.
package enum PostgresNIOWorkarounds {
    /// The pool's options: no keep-alive queries. In postgres-nio 1.33.2 one that starts as the pool closes runs on a
    /// closed connection, whose query never completes, and the pool never ends (a stress test reproduced it). An
    /// idle connection is closed after a minute anyway; a dead one fails the next operation, which is retried.
    static func adjust(_ options: inout PostgresClient.Configuration.Options) {
        options.keepAliveBehavior = nil
    }

    /// Commits the transaction on `connection`, failing as ``PostgresFailure/Kind/rolledBack`` when the server
    /// answered ROLLBACK.
    ///
    /// A statement's error reaches only whoever reads its rows (postgres-nio 1.33.2 hands a SELECT's error over with
    /// them): one never read left the transaction failed, and PostgreSQL answers COMMIT in a failed transaction with
    /// ROLLBACK, which postgres-nio reports as success.
    static func commit(_ operation: String, on connection: PostgresConnection, logger: Logger) async throws {
        let committed = try await connection.query("COMMIT", logger: logger) { _ in }.get()
        guard committed.command == "COMMIT" else {
            throw PostgresFailure(
                .rolledBack,
                reason: "\(operation) was rolled back: one of its statements failed unseen",
                context: "the server answered COMMIT with \(committed.command)"
            )
        }
    }

    /// Whether `error` left `connection` able to run `ROLLBACK`.
    ///
    /// Not after the connection went (closed, a FATAL server error such as `pg_terminate_backend`'s): the server
    /// aborted the transaction already, and postgres-nio 1.33.2 may never answer a statement sent on a connection
    /// that is closing, which held a failed write until its deadline (a test caught it).
    static func canRollBack(_ connection: PostgresConnection, after error: any Error) -> Bool {
        guard !connection.isClosed else { return false }
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

    /// The rows of `statement`: run prepared (parsed and planned once per connection) when `prepares`, else as a
    /// one-off query, for a pooler that cannot carry prepared statements across transactions.
    ///
    /// postgres-nio 1.33.2 answers every later use of a statement whose preparation failed (the schema not migrated
    /// yet, say) with that failure, for the connection's life. An error that may have been the preparation's, not a
    /// row's data or a conflict, retires the connection: the server rolls its transaction back and the pool opens a
    /// fresh one.
    package static func rows<Statement: PostgresPreparedStatement>(
        of statement: Statement,
        prepares: Bool,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [PostgresRow] where Statement.Row == PostgresRow {
        guard prepares else {
            let query = PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())
            return try await connection.query(query, logger: logger).collect()
        }
        do {
            var rows: [PostgresRow] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        } catch let error as PSQLError {
            if let sqlState = error.serverInfo?[.sqlState],
                !PostgresFailure.isRowDataError(sqlState: sqlState),
                !PostgresFailure.isConflict(sqlState: sqlState)
            {
                try? await connection.close()
            }
            throw error
        }
    }
}
