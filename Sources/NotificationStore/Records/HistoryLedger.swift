#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The reconciler's coverage of Apple's notification history for one app, environment and filter: which time
/// ranges were fetched completely, which are being fetched (with Apple's pagination token), and which can no longer
/// be fetched (older than Apple keeps), each a `history_ledger` row. Entries never overlap and are kept in order.
package struct HistoryLedger: Sendable, Hashable {
    /// What a ledger covers: one app's history in one environment, narrowed by one filter.
    package struct Key: Sendable, Hashable, Comparable, CustomStringConvertible {
        package var bundleID: String
        /// `Production` or `Sandbox`.
        package var environment: String
        /// The request's filter in a stable text form, empty when none (the periodic reconciler's).
        package var filter: String

        package init(bundleID: String, environment: String, filter: String = "") {
            self.bundleID = bundleID
            self.environment = environment
            self.filter = filter
        }

        package var description: String {
            "\(bundleID) \(environment)" + (filter.isEmpty ? "" : " [\(filter)]")
        }

        package static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.bundleID, lhs.environment, lhs.filter) < (rhs.bundleID, rhs.environment, rhs.filter)
        }
    }

    /// Where a range stands.
    package enum State: String, Sendable, Hashable, CaseIterable {
        /// Every page of the range is on the raw topic.
        case covered
        /// Pages are being fetched; `paginationToken` names the next one (nil: the range starts at its first page).
        case inProgress = "in_progress"
        /// Apple no longer keeps the range (its start is older than Apple's history limit): it cannot be fetched.
        case lost
    }

    /// One time range of the ledger.
    package struct Entry: Sendable, Hashable, CustomStringConvertible {
        package var start: Date
        package var end: Date
        package var state: State
        /// The next page of an in-progress range.
        package var paginationToken: String?
        /// Pages and notifications put on the raw topic for this range (summed when covered ranges merge).
        package var pages: Int
        package var notifications: Int
        /// Why a range is lost, or the last error met fetching an in-progress range (cleared by the next page).
        package var note: String?
        /// When the entry last changed.
        package var updatedAt: Date

        package init(
            start: Date,
            end: Date,
            state: State,
            paginationToken: String? = nil,
            pages: Int = 0,
            notifications: Int = 0,
            note: String? = nil,
            updatedAt: Date = Date()
        ) {
            // Whole milliseconds, Apple's unit: PostgreSQL keeps microseconds, and a range read back must equal the
            // range recorded, or the gap between them would be fetched for ever.
            self.start = start.wholeMilliseconds
            self.end = end.wholeMilliseconds
            self.state = state
            self.paginationToken = paginationToken
            self.pages = pages
            self.notifications = notifications
            self.note = note
            self.updatedAt = updatedAt
        }

        /// The entry's time range.
        package var range: Range<Date> { start..<end }

        package var description: String {
            "\(state.rawValue) \(start.formatted(.iso8601))..<\(end.formatted(.iso8601))"
                + (note.map { " (\($0))" } ?? "")
        }
    }

    package var key: Key
    /// Ordered by start, never overlapping.
    package var entries: [Entry]

    /// A ledger of `entries`, which may come in any order but must not overlap.
    package init(key: Key, entries: [Entry] = []) {
        self.key = key
        self.entries = entries.sorted { $0.start < $1.start }
    }
}

extension Date {
    /// The date rounded to whole milliseconds since 1970: the precision of Apple's history requests and of the ledger.
    package var wholeMilliseconds: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}

extension HistoryLedger {
    /// The seconds the covered entries span.
    package var coveredSeconds: TimeInterval { seconds(of: .covered) }

    /// The seconds the lost entries span.
    package var lostSeconds: TimeInterval { seconds(of: .lost) }

    /// The end of the unbroken run of covered and lost entries from the first entry on: everything before it was
    /// fetched or is known gone. Nil when the first entry is in progress (or there is none).
    package var settledUntil: Date? {
        var end: Date?
        for entry in entries {
            guard entry.state != .inProgress, end.map({ entry.start <= $0 }) ?? true else { break }
            end = entry.end
        }
        return end
    }

    private func seconds(of state: State) -> TimeInterval {
        entries.lazy.filter { $0.state == state }.map { $0.end.timeIntervalSince($0.start) }.reduce(0, +)
    }
}
