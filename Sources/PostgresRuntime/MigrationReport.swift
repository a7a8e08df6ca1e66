/// What a run of ``PostgresRuntime/migrate(_:)`` did.
package struct MigrationReport: Sendable, Hashable {
    /// The migrations this run applied, in order; empty when the schema was already current.
    package var applied: [SchemaMigration]
    /// The schema version after the run (the highest recorded version).
    package var version: Int
    /// Versions recorded in the database that this program does not know: a newer program migrated it. This
    /// program keeps working (migrations only add), but should be upgraded.
    package var unknownVersions: [Int]

    package init(applied: [SchemaMigration], version: Int, unknownVersions: [Int]) {
        self.applied = applied
        self.version = version
        self.unknownVersions = unknownVersions
    }
}
