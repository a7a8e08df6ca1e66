import AppStoreTestSupport
import Foundation
import HistorySync
import NotificationStore
import Testing

@Suite("The reconciler's coverage ledger: ranges covered, in progress and lost, kept apart and merged", .tags(.fast))
struct HistoryLedgerRangesTests {
    static let key = HistoryLedger.Key(bundleID: "com.example.notes", environment: "Sandbox")
    static let origin = Date(timeIntervalSince1970: 1_790_000_000)

    /// Hour `hour` after the origin.
    static func at(_ hour: Double) -> Date { origin.addingTimeInterval(hour * 3_600) }

    static func entry(
        _ start: Double,
        _ end: Double,
        _ state: HistoryLedger.State,
        token: String? = nil,
        pages: Int = 0
    ) -> HistoryLedger.Entry {
        HistoryLedger.Entry(
            start: at(start),
            end: at(end),
            state: state,
            paginationToken: token,
            pages: pages,
            updatedAt: origin
        )
    }

    static func shape(_ ledger: HistoryLedger) -> [String] {
        ledger.entries.map {
            "\($0.state.rawValue) \(Int($0.start.timeIntervalSince(origin) / 3_600))-"
                + "\(Int($0.end.timeIntervalSince(origin) / 3_600))" + ($0.paginationToken.map { " \($0)" } ?? "")
        }
    }

    @Test("gaps are what no range holds; adjacent covered ranges merge, counts summed; in-progress ones never merge")
    func gapsAndMerging() {
        var ledger = HistoryLedger(key: Self.key)
        ledger.record(Self.entry(0, 2, .covered, pages: 2))
        ledger.record(Self.entry(2, 3, .covered, pages: 1))
        ledger.record(Self.entry(5, 6, .inProgress, token: "t"))
        ledger.record(Self.entry(6, 7, .inProgress))
        #expect(Self.shape(ledger) == ["covered 0-3", "in_progress 5-6 t", "in_progress 6-7"])
        #expect(ledger.entries.first?.pages == 3)
        #expect(
            ledger.gaps(in: Self.at(-1)..<Self.at(8)) == [
                Self.at(-1)..<Self.at(0), Self.at(3)..<Self.at(5), Self.at(7)..<Self.at(8),
            ]
        )
        #expect(ledger.unsettled(in: Self.at(0)..<Self.at(8)) == [Self.at(3)..<Self.at(8)])
        #expect(ledger.inProgress(overlapping: Self.at(5.5)..<Self.at(6.5)).count == 2)
        #expect(ledger.settledUntil == Self.at(3))
        #expect(ledger.lastRunStart == Self.at(5), "a gap at 3-5 breaks the run")
        #expect(ledger.coveredSeconds == 3 * 3_600)
    }

    @Test("a range recorded over others cuts them back; an in-progress range cut short loses its token and counts")
    func cutting() {
        var ledger = HistoryLedger(key: Self.key, entries: [Self.entry(0, 10, .inProgress, token: "t", pages: 4)])
        ledger.record(Self.entry(0, 3, .lost))
        #expect(Self.shape(ledger) == ["lost 0-3", "in_progress 3-10"])
        #expect(ledger.entries.last?.pages == 0)
        ledger.record(Self.entry(3, 10, .covered))
        ledger.record(Self.entry(12, 14, .covered))
        ledger.record(Self.entry(2, 4, .lost))
        #expect(Self.shape(ledger) == ["lost 0-4", "covered 4-10", "covered 12-14"])
        #expect(ledger.settledUntil == Self.at(10))
        ledger.forget(Self.at(5)..<Self.at(13))
        #expect(Self.shape(ledger) == ["lost 0-4", "covered 4-5", "covered 13-14"])
        #expect(ledger.lostSeconds == 4 * 3_600)
    }

    @Test("what a second look asks again: the covered parts of a window, cut to it; never in progress or lost")
    func coveredInWindow() {
        let ledger = HistoryLedger(
            key: Self.key,
            entries: [
                Self.entry(0, 2, .lost), Self.entry(2, 5, .covered), Self.entry(5, 6, .inProgress, token: "t"),
                Self.entry(6, 9, .covered),
            ]
        )
        #expect(ledger.covered(in: Self.at(1)..<Self.at(8)) == [Self.at(2)..<Self.at(5), Self.at(6)..<Self.at(8)])
        #expect(ledger.covered(in: Self.at(5)..<Self.at(6)).isEmpty)
        #expect(ledger.covered(in: Self.at(8)..<Self.at(8)).isEmpty, "an empty window (no second look)")
    }
}
