import Logging
import PostgresNIO

extension NotificationStore {
    /// The table recording applied migrations.
    static let migrationsTable = "asnp_schema_migrations"
    /// The advisory lock key migrations hold: ASCII `asnp`. Workers starting together migrate one at a time.
    static let migrationLockKey: Int64 = 0x6173_6E70

    /// Applies every migration the database has not recorded yet, in one transaction, holding an advisory lock
    /// so that several processes starting at once do not race.
    ///
    /// Idempotent: a current schema is left alone. An applied migration whose statements differ from this
    /// program's is an error (a released migration must never change).
    @discardableResult
    package func migrate() async throws(NotificationStoreError) -> MigrationReport {
        let logger = self.logger
        let report = try await inTransaction("migrating the schema") { connection in
            // Lock first: two sessions creating the same table at once can both fail.
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS \(unescaped: Self.migrationsTable) (
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
                "SELECT version, checksum FROM \(unescaped: Self.migrationsTable)",
                logger: logger
            ).decode((Int, String).self) {
                recorded[version] = checksum
            }
            var applied: [SchemaMigration] = []
            for migration in SchemaMigration.all {
                if let checksum = recorded[migration.version] {
                    guard checksum == migration.checksum else {
                        throw NotificationStoreError(
                            code: .migrationFailed,
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
                    INSERT INTO \(unescaped: Self.migrationsTable) (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """,
                    logger: logger
                )
                applied.append(migration)
            }
            let known = Set(SchemaMigration.all.map(\.version))
            let unknown = recorded.keys.filter { !known.contains($0) }.sorted()
            let version = max(recorded.keys.max() ?? 0, applied.last?.version ?? 0)
            return MigrationReport(applied: applied, version: version, unknownVersions: unknown)
        }
        // The months ahead, at once: workers' maintenance keeps them made, and must not be what a first batch waits for.
        do {
            try await makeBodyPartitions(monthsAhead: Self.bodyMonthsAhead)
        } catch {
            logger.warning(
                "The body partitions of the coming months could not be made; the workers make them later",
                metadata: ["error": "\(error)"]
            )
        }
        for migration in report.applied {
            logger.info(
                "Applied schema migration",
                metadata: ["version": "\(migration.version)", "name": "\(migration.name)"]
            )
        }
        if !report.unknownVersions.isEmpty {
            logger.warning(
                "The database has schema migrations this program does not know; a newer asnp migrated it",
                metadata: ["unknown": "\(report.unknownVersions)", "known": "\(SchemaMigration.latestVersion)"]
            )
        }
        return report
    }

    /// The highest applied migration version, or 0 for a database never migrated.
    package func schemaVersion() async throws(NotificationStoreError) -> Int {
        let logger = self.logger
        return try await withConnection("reading the schema version") { connection in
            let exists =
                try await connection.query(
                    "SELECT to_regclass(\(Self.migrationsTable)) IS NOT NULL",
                    logger: logger
                ).decode(Bool.self).first(where: { _ in true }) ?? false
            guard exists else { return 0 }
            return try await connection.query(
                "SELECT coalesce(max(version), 0) FROM \(unescaped: Self.migrationsTable)",
                logger: logger
            ).decode(Int.self).first(where: { _ in true }) ?? 0
        }
    }

    /// Fails with ``NotificationStoreError/Code/schemaNotReady`` unless the schema is at least the version this
    /// program needs; a worker that does not migrate by itself checks this before consuming.
    package func checkSchema() async throws(NotificationStoreError) {
        let version = try await schemaVersion()
        guard version >= SchemaMigration.latestVersion else {
            throw NotificationStoreError(
                code: .schemaNotReady,
                reason: "the database schema is at version \(version), this program needs "
                    + "\(SchemaMigration.latestVersion); run `asnp migrate`"
            )
        }
    }
}
