import Foundation
import NotificationStore

/// The reconciler's ledgers and the failed deliveries Apple reported, for `asnp history status` and `asnp status`.
package struct HistoryLedgerReport: Encodable {
    /// One ledger: an app's history in one environment, with one filter.
    package struct Ledger: Encodable {
        package var bundleID: String
        package var environment: String
        package var filter: String
        /// The end of the unbroken covered-or-lost run from the first range: everything before it is settled.
        package var settledUntil: Date?
        package var coveredSeconds: Double
        package var lostSeconds: Double
        package var ranges: [Range]
    }

    package struct Range: Encodable {
        package var start: Date
        package var end: Date
        package var state: String
        package var pages: Int
        package var notifications: Int
        /// Why a range is lost, or the last error met fetching a range in progress.
        package var note: String?
        package var resumable: Bool
        package var updatedAt: Date
    }

    package var ledgers: [Ledger]
    package var failedDeliveries: [HistoryDelivery.Summary]

    /// Reads both from `store`.
    package static func read(from store: NotificationStore) async throws -> HistoryLedgerReport {
        let ledgers = try await store.historyLedgers()
        return HistoryLedgerReport(
            ledgers: ledgers.map { ledger in
                Ledger(
                    bundleID: ledger.key.bundleID,
                    environment: ledger.key.environment,
                    filter: ledger.key.filter,
                    settledUntil: ledger.settledUntil,
                    coveredSeconds: ledger.coveredSeconds,
                    lostSeconds: ledger.lostSeconds,
                    ranges: ledger.entries.map { entry in
                        Range(
                            start: entry.start,
                            end: entry.end,
                            state: entry.state.rawValue,
                            pages: entry.pages,
                            notifications: entry.notifications,
                            note: entry.note,
                            resumable: entry.paginationToken != nil,
                            updatedAt: entry.updatedAt
                        )
                    }
                )
            },
            failedDeliveries: try await store.historyDeliverySummaries()
        )
    }

    /// One line per ledger (ranges in progress and lost ones listed under it; covered ones summed); `detailed` lists
    /// every range.
    package func lines(detailed: Bool) -> [String] {
        var lines: [String] = []
        if ledgers.isEmpty { lines.append("history         no ledger: the reconciler has not run") }
        for ledger in ledgers {
            let filter = ledger.filter.isEmpty ? "" : " [\(ledger.filter)]"
            let settled = ledger.settledUntil.map { "settled until \(Self.time($0))" } ?? "nothing settled yet"
            lines.append(
                "history         \(ledger.bundleID) \(ledger.environment)\(filter): \(settled); covered "
                    + "\(Self.span(ledger.coveredSeconds)), lost \(Self.span(ledger.lostSeconds))"
            )
            for range in ledger.ranges where detailed || range.state != "covered" {
                var line =
                    "  \(range.state.padding(toLength: 12, withPad: " ", startingAt: 0))"
                    + "\(Self.time(range.start)) .. \(Self.time(range.end))"
                if range.state != "lost" { line += ", \(range.notifications) notifications in \(range.pages) pages" }
                if range.state == "in_progress" {
                    line += range.resumable ? ", resumes at its page" : ", from its start"
                }
                if let note = range.note { line += ": \(note)" }
                lines.append(line)
            }
        }
        for summary in failedDeliveries {
            lines.append(
                "failed sends    \(summary.bundleID) \(summary.environment) \(summary.lastResult): "
                    + "\(summary.notifications) (\(summary.neverDelivered) never delivered)"
                    + (summary.latestAttemptAt.map { ", last attempt \(Self.time($0))" } ?? "")
            )
        }
        return lines
    }

    private static func time(_ date: Date) -> String { date.formatted(.iso8601) }

    private static func span(_ seconds: Double) -> String {
        seconds >= 86_400
            ? String(format: "%.1f days", seconds / 86_400) : String(format: "%.1f hours", seconds / 3_600)
    }
}
