#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The moments the store writes to `timestamptz` columns, as milliseconds since 1970: years 1 to 9999, what
/// `timestamptz` and every downstream reader can take (days counted in the proleptic Gregorian calendar, as
/// PostgreSQL counts them).
package enum PostgresTimestamp {
    package static let storableMilliseconds: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// `date` in milliseconds since 1970, held within ``storableMilliseconds``: a receive time from a bad clock or
    /// header must not make a whole batch unstorable.
    package static func milliseconds(_ date: Date) -> Int64 {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return storableMilliseconds.lowerBound }
        return Int64(
            min(max(milliseconds, Double(storableMilliseconds.lowerBound)), Double(storableMilliseconds.upperBound))
        )
    }
}
