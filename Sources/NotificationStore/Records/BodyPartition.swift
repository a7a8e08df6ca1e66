#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One month of `notification_bodies`: the raw bodies and decoded JSON of the notifications received in it (UTC).
package struct BodyPartition: Sendable, Hashable {
    /// The partition's table, `notification_bodies_YYYY_MM`.
    package var name: String
    /// The first instant it holds.
    package var start: Date
    /// The first instant it no longer holds (the next month's start).
    package var end: Date
    /// Its size on disk, indexes included.
    package var bytes: Int64
    /// PostgreSQL's estimate of its rows (from the last ANALYZE or VACUUM; -1 before either).
    package var estimatedRows: Int64
}
