import AppStoreSigning
import AppStoreTestSupport
import Foundation
import LoadGeneration
import PipelineContract
import Testing

@Suite("asnp-bench soak: the seeded fault schedule, the hostile bodies and the checks' parsing", .tags(.fast))
struct SoakScheduleTests {
    @Test("The same seed gives the same schedule; another seed another")
    func seeded() {
        let one = SoakSchedule(seed: 53, posting: .seconds(1_800), perKind: 30)
        #expect(one == SoakSchedule(seed: 53, posting: .seconds(1_800), perKind: 30))
        #expect(one.faults != SoakSchedule(seed: 54, posting: .seconds(1_800), perKind: 30).faults)
    }

    @Test(
        "Every kind comes the asked number of times inside the window, within its lengths, never overlapping itself",
        arguments: [(UInt64(1), 180, 3), (UInt64(2), 180, 1), (UInt64(3), 1_800, 30), (UInt64(4), 300, 5)]
    )
    func everyKindApart(seed: UInt64, seconds: Int, perKind: Int) {
        let schedule = SoakSchedule(seed: seed, posting: .seconds(seconds), perKind: perKind)
        #expect(schedule.faults.count == perKind * SoakSchedule.Kind.allCases.count)
        #expect(schedule.faults.map(\.start) == schedule.faults.map(\.start).sorted())
        for kind in SoakSchedule.Kind.allCases {
            let faults = schedule.faults.filter { $0.kind == kind }
            #expect(faults.count == perKind, "\(kind)")
            for fault in faults {
                #expect(schedule.window.contains(fault.start) && fault.end <= schedule.window.upperBound, "\(fault)")
                #expect(fault.length <= kind.lengthRange.upperBound, "\(fault)")
            }
            for (earlier, later) in zip(faults, faults.dropFirst()) {
                #expect(earlier.end < later.start, "\(kind) overlaps itself: \(earlier), \(later)")
            }
        }
    }

    @Test("The default 30-minute soak has at least 30 faults of every kind, at full length where it has room")
    func thirtyMinutes() {
        let schedule = SoakSchedule(seed: 7, posting: .seconds(1_800), perKind: 30)
        for kind in SoakSchedule.Kind.allCases {
            #expect(schedule.faults.filter { $0.kind == kind }.count >= 30)
        }
        let restarts = schedule.faults.filter { $0.kind == .postgresRestarted }
        #expect(restarts.allSatisfy { $0.length >= .seconds(2) }, "\(restarts.map(\.length))")
        #expect(SoakSchedule.shortestPosting(perKind: 30) <= .seconds(1_800))
    }

    @Test("Month-boundary times of receipt straddle this month's end, the next's, and months retention drops")
    func monthBoundaries() throws {
        let now = try Date("2026-11-29T10:40:00Z", strategy: .iso8601)
        // As the raw topic's header writes them: to the nearest millisecond.
        let instants = SoakWorkload.monthBoundaryInstants(around: now).map(RFC3339Timestamp.string(from:))
        #expect(
            instants == [
                "2026-08-31T23:59:59.999Z", "2026-09-01T00:00:00.000Z", "2026-11-30T23:59:59.999Z",
                "2026-12-01T00:00:00.000Z", "2026-12-01T04:59:59.999Z", "2027-01-01T00:00:00.000Z",
            ]
        )
    }

    @Test(
        "Hostile bodies: one the ingress refuses, the rest JSON objects; the big headers unique, under the body limit"
    )
    func hostileBodies() {
        let sample = #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.eyJub3RpZmljYXRpb25VVUlEIjoiMSJ9.c2lnbmF0dXJl"}"#
        let (refused, rejected) = SoakWorkload.hostileBodies(pick: 1, sample: sample)
        #expect(refused.count == 1 && !refused[0].hasPrefix("{"))
        #expect(
            rejected.count == 3 + SoakWorkload.bigHeaders
                && rejected.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") }
        )
        let big = rejected.filter { $0.utf8.count > 150_000 }
        #expect(big.count == SoakWorkload.bigHeaders && big.allSatisfy { $0.utf8.count < 256 * 1_024 })
        #expect(SoakWorkload.hostileBodies(pick: 1, sample: sample) == (refused, rejected))
        let other = SoakWorkload.hostileBodies(pick: 2, sample: sample).rejected
        #expect(Set(big).isDisjoint(with: other))
    }

    @Test("Each tampered copy is posted once, though the same body (or a duplicate of it) is picked again")
    func tamperedOnce() {
        var posted = ["a", "a", "b"]
        var generator = SeededGenerator(seed: 53)
        let tampered = SoakWorkload.insertTampered(into: &posted, picks: 20, using: &generator) { $0 + "!" }
        // Twenty picks of three bodies and their copies: some picks give a copy made before.
        #expect(tampered.count < 20)
        for copy in tampered { #expect(posted.filter { $0 == copy }.count == 1, "\(copy)") }
        #expect(posted.count == 3 + tampered.count && posted.filter { $0 == "a" }.count == 2)
    }

    @Test("The state check compares timestamps as instants, whatever offset PostgreSQL wrote them with")
    func instants() {
        #expect(SoakChecks.instant("2026-11-23T23:30:01.123456+00:00") == "1795476601.123456")
        #expect(SoakChecks.instant("2026-11-23T18:30:01.1234560-05:00") == "1795476601.123456")
        #expect(SoakChecks.instant("2026-11-23T23:30:01Z") == "1795476601")
        #expect(SoakChecks.instant("not a time") == nil)
        #expect(
            SoakChecks.instantsNormalized(#"{"a":"2026-11-20T08:00:00+00:00","b":1}"#)
                == SoakChecks.instantsNormalized(#"{"b":1,"a":"2026-11-20T03:00:00-05:00"}"#)
        )
    }
}
