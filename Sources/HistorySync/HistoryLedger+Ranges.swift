import NotificationStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The reconciler's reading and recording of its ledger's ranges: pure, over ``HistoryLedger/entries``; the store
/// only loads and saves a ledger.
extension HistoryLedger {
    /// The parts of `window` no entry holds (in any state), in order: what is still to fetch.
    package func gaps(in window: Range<Date>) -> [Range<Date>] {
        var gaps: [Range<Date>] = []
        var cursor = window.lowerBound
        for entry in entries where entry.end > window.lowerBound && entry.start < window.upperBound {
            if entry.start > cursor { gaps.append(cursor..<entry.start) }
            cursor = max(cursor, entry.end)
        }
        if cursor < window.upperBound { gaps.append(cursor..<window.upperBound) }
        return gaps
    }

    /// The parts of `window` no covered or lost entry holds, in order: what may still be fetched (gaps, and
    /// ranges in progress).
    package func unsettled(in window: Range<Date>) -> [Range<Date>] {
        HistoryLedger(key: key, entries: entries.filter { $0.state != .inProgress }).gaps(in: window)
    }

    /// The parts of `window` covered entries hold, in order (adjacent covered entries are merged already): what a
    /// second look may ask Apple again.
    package func covered(in window: Range<Date>) -> [Range<Date>] {
        entries.compactMap { entry in
            guard entry.state == .covered, entry.range.overlaps(window) else { return nil }
            return max(entry.start, window.lowerBound)..<min(entry.end, window.upperBound)
        }
    }

    /// The in-progress entries that overlap `window`, in order: what to resume.
    package func inProgress(overlapping window: Range<Date>) -> [Entry] {
        entries.filter { $0.state == .inProgress && $0.range.overlaps(window) }
    }

    /// The entry holding `range` exactly, if there is one.
    package func entry(for range: Range<Date>) -> Entry? {
        entries.first { $0.range == range }
    }

    /// Records `entry` over its range. What other entries held of that range is cut away; an in-progress entry
    /// cut short loses its token and counts (its pages belonged to the request for its whole range, which the
    /// remainder will ask again from its first page). Adjacent covered entries merge, and so do adjacent lost ones.
    package mutating func record(_ entry: Entry) {
        var entry = entry
        (entry.start, entry.end) = (entry.start.wholeMilliseconds, entry.end.wholeMilliseconds)
        guard entry.start < entry.end else { return }
        remove(entry.range)
        let index = entries.firstIndex { $0.start >= entry.end } ?? entries.endIndex
        entries.insert(entry, at: index)
        mergeNeighbours()
    }

    /// Removes everything the ledger holds within `window` (a restart: the window is fetched again).
    package mutating func forget(_ window: Range<Date>) {
        guard !window.isEmpty else { return }
        remove(window)
        mergeNeighbours()
    }

    /// The start of the first entry: the periodic reconciler keeps everything from there on covered.
    package var earliestStart: Date? { entries.first?.start }

    /// The start of the last unbroken run of entries (each starting where the one before ends): the periodic
    /// reconciler keeps everything from there on covered, so a turn that failed, or a process down for days, leaves
    /// no hole. An older range synced apart from it (a window synced by hand) does not pull the turns back to it.
    package var lastRunStart: Date? {
        var start = entries.last?.start
        for (earlier, later) in zip(entries, entries.dropFirst()).reversed() {
            guard earlier.end == later.start else { break }
            start = earlier.start
        }
        return start
    }

    /// Cuts `range` out of every entry.
    private mutating func remove(_ range: Range<Date>) {
        var kept: [Entry] = []
        kept.reserveCapacity(entries.count + 1)
        for entry in entries {
            guard entry.range.overlaps(range) else {
                kept.append(entry)
                continue
            }
            if entry.start < range.lowerBound {
                var left = entry
                left.end = range.lowerBound
                kept.append(left.cutShort())
            }
            if entry.end > range.upperBound {
                var right = entry
                right.start = range.upperBound
                right.pages = 0
                right.notifications = 0
                kept.append(right.cutShort())
            }
        }
        entries = kept
    }

    private mutating func mergeNeighbours() {
        var merged: [Entry] = []
        merged.reserveCapacity(entries.count)
        for entry in entries {
            if var last = merged.last, last.end == entry.start, last.state == entry.state, entry.state != .inProgress {
                last.end = entry.end
                last.pages += entry.pages
                last.notifications += entry.notifications
                if entry.updatedAt >= last.updatedAt {
                    last.updatedAt = entry.updatedAt
                    last.note = entry.note ?? last.note
                }
                merged[merged.count - 1] = last
            } else {
                merged.append(entry)
            }
        }
        entries = merged
    }
}

extension HistoryLedger.Entry {
    /// The entry after part of its range was cut away: an in-progress one starts its remaining range afresh.
    fileprivate func cutShort() -> Self {
        guard state == .inProgress else { return self }
        var entry = self
        entry.paginationToken = nil
        entry.pages = 0
        entry.notifications = 0
        return entry
    }
}
