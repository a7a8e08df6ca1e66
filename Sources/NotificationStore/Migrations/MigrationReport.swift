/// What ``NotificationStore/migrate()`` did.
public struct MigrationReport: Sendable, Hashable {
    /// The migrations this run applied, in order; empty when the schema was already current.
    public var applied: [SchemaMigration]
    /// The schema version after the run (the highest recorded version).
    public var version: Int
    /// Versions recorded in the database that this program does not know: a newer program migrated it. This
    /// program keeps working (migrations only add), but should be upgraded.
    public var unknownVersions: [Int]

    public init(applied: [SchemaMigration], version: Int, unknownVersions: [Int]) {
        self.applied = applied
        self.version = version
        self.unknownVersions = unknownVersions
    }
}
