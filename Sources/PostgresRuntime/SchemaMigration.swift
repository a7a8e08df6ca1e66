import Crypto

/// One versioned change to the database schema.
///
/// Applied migrations are recorded in `asnp_schema_migrations` with a checksum of their statements; a migration,
/// once released, is never edited: a later change is a new migration with a higher version.
package struct SchemaMigration: Sendable, Hashable {
    /// The position in the sequence; applied in ascending order, each once.
    package var version: Int
    /// A short name, for the record and for logs.
    package var name: String
    /// The SQL statements, run in order inside the migration transaction (one statement each, because the
    /// extended query protocol takes one at a time).
    package var statements: [String]

    /// Creates a migration.
    package init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }

    /// A SHA-256 of the statements, hex; detects a migration edited after it was applied.
    package var checksum: String {
        var hash = SHA256()
        for statement in statements {
            hash.update(data: Array(statement.utf8))
            hash.update(data: [0])
        }
        return hash.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
