import Logging
import PostgresNIO

extension PostgresRuntime {
    /// A schema's migrations and where their record is kept.
    package struct Migrations: Sendable {
        /// Every migration, in version order.
        package var all: [SchemaMigration]
        /// The table recording applied migrations.
        package var table: String
        /// The advisory lock migrations hold, so that processes starting together migrate one at a time.
        package var lockKey: Int64

        package init(_ all: [SchemaMigration], table: String, lockKey: Int64) {
            self.all = all
            self.table = table
            self.lockKey = lockKey
        }

        /// The schema version this program needs.
        package var latestVersion: Int { all.last?.version ?? 0 }
    }

    /// Applies every migration the database has not recorded yet, in one transaction, holding the advisory lock
    /// so that several processes starting at once do not race.
    ///
    /// Idempotent: a current schema is left alone. An applied migration whose statements differ from this
    /// program's fails as ``PostgresFailure/Kind/migrationFailed`` (a released migration must never change).
    package func migrate(_ migrations: Migrations) async throws -> MigrationReport {
        let logger = self.logger
        return try await inTransaction("migrating the schema") { connection in
            // Lock first: two sessions creating the same table at once can both fail.
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrations.lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS \(unescaped: migrations.table) (
                    version    integer     PRIMARY KEY,
                    name       text        NOT NULL,
                    checksum   text        NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                logger: logger
            )
            var recorded: [Int: String] = [:]
            for try await (version, checksum) in try await connection.query(
                "SELECT version, checksum FROM \(unescaped: migrations.table)",
                logger: logger
            ).decode((Int, String).self) {
                recorded[version] = checksum
            }
            var applied: [SchemaMigration] = []
            for migration in migrations.all {
                if let checksum = recorded[migration.version] {
                    guard checksum == migration.checksum else {
                        throw PostgresFailure(
                            .migrationFailed,
                            reason: "migration \(migration.version) (\(migration.name)) was applied with different "
                                + "statements than this program carries; released migrations must not change"
                        )
                    }
                    continue
                }
                for statement in migration.statements {
                    // Read to the end: a SELECT's error arrives with its rows, and would otherwise surface as the
                    // next statement's "current transaction is aborted" (25P02), its cause unsaid.
                    for try await _ in try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) {
                    }
                }
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: migrations.table) (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """,
                    logger: logger
                )
                applied.append(migration)
            }
            let known = Set(migrations.all.map(\.version))
            let unknown = recorded.keys.filter { !known.contains($0) }.sorted()
            let version = max(recorded.keys.max() ?? 0, applied.last?.version ?? 0)
            return MigrationReport(applied: applied, version: version, unknownVersions: unknown)
        }
    }

    /// The highest version recorded in `table`, or 0 for a database never migrated.
    package func schemaVersion(table: String) async throws -> Int {
        let logger = self.logger
        return try await withConnection("reading the schema version") { connection in
            let exists =
                try await connection.query(
                    "SELECT to_regclass(\(table)) IS NOT NULL",
                    logger: logger
                ).decode(Bool.self).first(where: { _ in true }) ?? false
            guard exists else { return 0 }
            return try await connection.query(
                "SELECT coalesce(max(version), 0) FROM \(unescaped: table)",
                logger: logger
            ).decode(Int.self).first(where: { _ in true }) ?? 0
        }
    }
}
