import Logging
import PostgresNIO

extension PostgresConnection {
    /// The rows of `statement`: run prepared (parsed and planned once per connection) when `prepares`, else as a
    /// one-off query, for a pooler that cannot carry prepared statements across transactions.
    ///
    /// postgres-nio 1.33.2 answers every later use of a statement whose preparation failed (the schema not migrated
    /// yet, say) with that failure, for the connection's life. An error that may have been the preparation's, not a
    /// row's data or a conflict, retires the connection: the server rolls its transaction back and the pool opens a
    /// fresh one.
    func rows<Statement: PostgresPreparedStatement>(
        of statement: Statement,
        prepares: Bool,
        logger: Logger
    ) async throws -> [PostgresRow] where Statement.Row == PostgresRow {
        guard prepares else {
            let query = PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())
            return try await self.query(query, logger: logger).collect()
        }
        do {
            var rows: [PostgresRow] = []
            for try await row in try await execute(statement, logger: logger) { rows.append(row) }
            return rows
        } catch let error as PSQLError {
            if let sqlState = error.serverInfo?[.sqlState],
                !NotificationStoreError.isRowDataError(sqlState: sqlState),
                !NotificationStoreError.isConflict(sqlState: sqlState)
            {
                try? await close()
            }
            throw error
        }
    }
}
