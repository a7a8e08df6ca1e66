#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 3339 timestamps in UTC with milliseconds (`2026-11-02T10:00:00.000Z`), as every event header and raw-topic
/// header writes them: written by hand because `Date.ISO8601FormatStyle` costs microseconds per call, and the
/// workers write two or three per notification.
package enum RFC3339Timestamp {
    /// The instant to the nearest millisecond; years 1 to 9999 (what PostgreSQL and the tables hold).
    package static func string(from date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let inDay = milliseconds - days * 86_400_000
        let (year, month, day) = civil(daysSince1970: days)
        var text = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, at offset: Int, digits: Int) {
            var value = value
            for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                text[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(year, at: 0, digits: 4)
        put(month, at: 5, digits: 2)
        put(day, at: 8, digits: 2)
        put(inDay / 3_600_000, at: 11, digits: 2)
        put(inDay / 60_000 % 60, at: 14, digits: 2)
        put(inDay / 1_000 % 60, at: 17, digits: 2)
        put(inDay % 1_000, at: 20, digits: 3)
        for (offset, byte) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z")] {
            text[offset] = UInt8(ascii: Unicode.Scalar(byte)!)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The proleptic Gregorian date of a day number (days since 1970-01-01), by Howard Hinnant's `civil_from_days`.
    static func civil(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
