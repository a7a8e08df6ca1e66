import Logging
import NotificationSchema
import PostgresRuntime

extension NotificationStore {
    /// Applies every migration the database has not recorded yet, in one transaction, holding an advisory lock
    /// so that several processes starting at once do not race.
    ///
    /// Idempotent: a current schema is left alone. An applied migration whose statements differ from this
    /// program's is an error (a released migration must never change).
    @discardableResult
    package func migrate() async throws(NotificationStoreError) -> MigrationReport {
        let report = try await classifying("migrating the schema") { try await runtime.migrate(.appStore) }
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
        try await classifying("reading the schema version") {
            try await runtime.schemaVersion(table: PostgresRuntime.Migrations.appStore.table)
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
