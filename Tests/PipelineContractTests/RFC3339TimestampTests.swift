import AppStoreTestSupport
import Foundation
import Testing

@testable import PipelineContract

@Suite("RFC 3339 timestamps as the headers write them", .tags(.fast))
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

    @Test("what string(from:) writes, date(from:) reads back to the millisecond, years 1 to 9999")
    func readBack() {
        var generator = SystemRandomNumberGenerator()
        let range = -62_135_596_800_000...Int64(253_402_300_799_999)
        let known: [Int64] = [0, -1, 951_782_400_000, range.lowerBound, range.upperBound, 4_107_542_400_000]
        for milliseconds in known + (0..<10_000).map({ _ in Int64.random(in: range, using: &generator) }) {
            let text = RFC3339Timestamp.string(from: Self.date(milliseconds))
            let parsed = RFC3339Timestamp.date(from: text)
            #expect(parsed.map { Int64(($0.timeIntervalSince1970 * 1_000).rounded()) } == milliseconds, "\(text)")
        }
    }

    @Test("date(from:) reads only the written form with a valid date and time; the header parser reads the rest")
    func readsOnlyTheWrittenForm() {
        let refused = [
            "", "2026-09-21T14:13:20Z", "2026-09-21T14:13:20.125+00:00", "2026-09-21 14:13:20.125Z",
            "2026-02-29T00:00:00.000Z", "1900-02-29T00:00:00.000Z", "2026-13-01T00:00:00.000Z",
            "2026-04-31T00:00:00.000Z", "2026-09-21T24:00:00.000Z", "2026-09-21T14:60:00.000Z",
            "2026-09-21T14:13:60.000Z", "0000-01-01T00:00:00.000Z", "2026-09-21T14:13:2a.125Z",
            "2026-09-21T14:13:20.125z", "２026-09-21T14:13:20.125Z",
        ]
        for text in refused { #expect(RFC3339Timestamp.date(from: text) == nil, "\(text)") }
        #expect(RFC3339Timestamp.date(from: "2000-02-29T23:59:59.999Z") == Self.date(951_868_799_999))
        #expect(RawNotificationHeaders.parse("2026-09-21T14:13:20Z") == Self.date(1_790_000_000_000))
        #expect(RawNotificationHeaders.parse("2026-09-21T14:13:20.125Z") == Self.date(1_790_000_000_125))
    }
}
