/// How a batch of notifications reaches PostgreSQL before being merged into the tables.
///
/// Both write the same rows; Docs/benchmarks.md compares them. ``unnest`` is the default: ``copy`` is about 10%
/// faster, but postgres-nio 1.33.2 stops the process when a connection is closed while COPY data is being sent,
/// so the store must never close one then, and a COPY that cannot finish keeps its connection (ADR 0009).
package struct BatchWriteMethod: Sendable, Hashable, CustomStringConvertible {
    enum Base: String, Sendable, Hashable {
        case copy, unnest
    }

    let base: Base

    /// `COPY` into a per-connection temporary table, then one merging statement.
    package static let copy = BatchWriteMethod(base: .copy)
    /// One merging statement over `UNNEST` of one array parameter per column.
    package static let unnest = BatchWriteMethod(base: .unnest)

    /// The method named `copy` or `unnest`, or nil.
    package init?(name: String) {
        guard let base = Base(rawValue: name) else { return nil }
        self.base = base
    }

    private init(base: Base) {
        self.base = base
    }

    package var description: String { base.rawValue }
}
