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

    /// The instant `text` names when it is exactly in the form ``string(from:)`` writes (milliseconds, `Z`), a valid
    /// date and time of years 1 to 9999; nil for any other text (which a general RFC 3339 parser may still read).
    /// By hand for the same reason as writing: the workers read one per consumed message.
    package static func date(from text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count == 24 else { return nil }
            for (offset, byte) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z")]
            where bytes[offset] != UInt8(ascii: Unicode.Scalar(byte)!) {
                return nil
            }
            func number(at offset: Int, digits: Int) -> Int64? {
                var value: Int64 = 0
                for position in offset..<(offset + digits) {
                    let digit = bytes[position] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int64(digit)
                }
                return value
            }
            guard let year = number(at: 0, digits: 4), let month = number(at: 5, digits: 2),
                let day = number(at: 8, digits: 2), let hour = number(at: 11, digits: 2),
                let minute = number(at: 14, digits: 2), let second = number(at: 17, digits: 2),
                let millisecond = number(at: 20, digits: 3),
                year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
                hour < 24, minute < 60, second < 60
            else { return nil }
            let days = daysSince1970(year: year, month: month, day: day)
            let milliseconds = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1_000 + millisecond
            return Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
        }
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The day number (days since 1970-01-01) of a proleptic Gregorian date, by Howard Hinnant's `days_from_civil`.
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
