import AppStoreTestSupport
import PostgresRuntime
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Moments as timestamptz takes them: years 1 to 9999, a bad clock held at the ends", .tags(.fast))
struct PostgresTimestampTests {
    @Test("A moment within the years is its milliseconds, rounded")
    func withinRange() {
        #expect(PostgresTimestamp.milliseconds(Date(timeIntervalSince1970: 1_700_000_000.0004)) == 1_700_000_000_000)
        #expect(PostgresTimestamp.milliseconds(Date(timeIntervalSince1970: -1.2346)) == -1_235)
    }

    @Test("A moment outside the years is held at the nearest end; one that is no number, at the first")
    func outsideRange() {
        let range = PostgresTimestamp.storableMilliseconds
        #expect(PostgresTimestamp.milliseconds(Date(timeIntervalSince1970: 1e15)) == range.upperBound)
        #expect(PostgresTimestamp.milliseconds(Date(timeIntervalSince1970: -1e15)) == range.lowerBound)
        #expect(PostgresTimestamp.milliseconds(Date(timeIntervalSince1970: .infinity)) == range.lowerBound)
        #expect(PostgresTimestamp.milliseconds(Date(timeIntervalSince1970: .nan)) == range.lowerBound)
    }

    @Test("The ends are the first and last millisecond of years 1 and 9999 (UTC), as PostgreSQL counts days")
    func ends() {
        // PostgreSQL's calendar is the proleptic Gregorian one (Foundation's switches to Julian before 1582).
        func daysBefore(year: Int64) -> Int64 {
            let years = year - 1
            return 365 * years + years / 4 - years / 100 + years / 400
        }
        func millisecondsAtStart(ofYear year: Int64) -> Int64 {
            (daysBefore(year: year) - daysBefore(year: 1970)) * 86_400_000
        }
        #expect(PostgresTimestamp.storableMilliseconds.lowerBound == millisecondsAtStart(ofYear: 1))
        #expect(PostgresTimestamp.storableMilliseconds.upperBound == millisecondsAtStart(ofYear: 10_000) - 1)
    }
}
