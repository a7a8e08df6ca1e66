import Foundation
import Testing

@testable import PipelineContract

@Suite("RFC 3339 timestamps as the headers write them")
struct RFC3339TimestampTests {
    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }

    @Test("known instants, before and after 1970, leap days, the ends of the range PostgreSQL holds")
    func known() {
        let cases: [(Int64, String)] = [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_790_000_000_125, "2026-09-21T14:13:20.125Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
            (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
        ]
        for (milliseconds, text) in cases {
            #expect(RFC3339Timestamp.string(from: Self.date(milliseconds)) == text, "\(milliseconds)")
        }
    }

    /// Foundation's calendar is Julian before 15 October 1582; RFC 3339 and PostgreSQL are Gregorian throughout.
    @Test("10,000 random instants from 1583 on: Foundation's parser reads back the same millisecond")
    func roundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        var style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        style.timeZone = .gmt
        for _ in 0..<10_000 {
            let milliseconds = Int64.random(in: -12_212_553_600_000...253_402_300_799_999, using: &generator)
            let text = RFC3339Timestamp.string(from: Self.date(milliseconds))
            let parsed = try Date(text, strategy: style)
            #expect(Int64((parsed.timeIntervalSince1970 * 1_000).rounded()) == milliseconds, "\(text)")
        }
    }
}
