import CommandSupport
import Foundation
import NotificationStore

/// What `asnp retention` found and did: the months of raw bodies kept, those dropped or held.
package struct RetentionReport: Encodable {
    package struct Month: Encodable {
        package var name: String
        /// RFC 3339, as every instant of the report.
        package var start: String
        package var end: String
        package var bytes: Int64
        /// PostgreSQL's estimate; -1 before the month was first analyzed.
        package var estimatedRows: Int64

        init(_ partition: BodyPartition) {
            (name, start, end, bytes, estimatedRows) = (
                partition.name, instant(partition.start), instant(partition.end), partition.bytes,
                partition.estimatedRows
            )
        }
    }

    /// A month past retention kept because decoded events of its notifications wait in the outbox.
    package struct Held: Encodable {
        package var name: String
        package var unpublishedEvents: Int

        init(_ held: BodyRetention.HeldMonth) {
            (name, unpublishedEvents) = (held.partition.name, held.unpublishedEvents)
        }
    }

    static func instant(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    package var retainMonths: Int?
    /// Months ending on or before this are dropped.
    package var cutoff: String?
    package var dropped: [String]
    package var wouldDrop: [String]
    /// Months past retention kept until their events are published.
    package var held: [Held]
    /// Rows of history_deliveries deleted (last reported before the cutoff).
    package var deletedFailedDeliveries: Int
    package var months: [Month]

    /// Lists the months of `store`; with `apply`, first drops those past `retainMonths` (with `dryRun`, only names
    /// them) and deletes the failed deliveries reported before the same cutoff.
    package static func run(
        on store: NotificationStore,
        retainMonths: Int?,
        apply: Bool,
        dryRun: Bool
    ) async throws -> RetentionReport {
        let retention =
            apply ? try await store.applyBodyRetention(keepMonths: retainMonths ?? 0, dryRun: dryRun) : BodyRetention()
        let deliveries =
            apply && !dryRun
            ? try await store.deleteHistoryDeliveries(
                fetchedBefore: NotificationStore.retentionCutoff(keepMonths: retainMonths ?? 0)
            ) : 0
        let partitions = try await store.bodyPartitions()
        return RetentionReport(
            retainMonths: retainMonths,
            cutoff: retainMonths.map { instant(NotificationStore.retentionCutoff(keepMonths: $0)) },
            dropped: apply && !dryRun ? retention.dropped.map(\.name) : [],
            wouldDrop: dryRun ? retention.dropped.map(\.name) : [],
            held: retention.held.map(Held.init),
            deletedFailedDeliveries: deliveries,
            months: (dryRun
                ? partitions : partitions.filter { kept in !retention.dropped.contains { $0.name == kept.name } })
                .map(Month.init)
        )
    }

    package var text: String {
        var lines: [String] = []
        if let retainMonths, let cutoff {
            lines.append("retention: the current month and \(retainMonths) before it; bodies before \(cutoff) go")
        } else {
            lines.append("retention: none set (retention.retainBodyMonths): bodies are kept for good")
        }
        lines += dropped.map { "dropped \($0)" } + wouldDrop.map { "would drop \($0)" }
        lines += held.map {
            "kept \($0.name): \($0.unpublishedEvents) decoded events of its notifications wait in the outbox"
        }
        if deletedFailedDeliveries > 0 {
            lines.append("deleted \(deletedFailedDeliveries) failed deliveries reported before the cutoff")
        }
        // RFC 3339 instants in UTC compare as text.
        let rows =
            [["month", "from", "rows (estimate)", "bytes", ""]]
            + months.map { month in
                [
                    month.name, month.start, month.estimatedRows < 0 ? "-" : "\(month.estimatedRows)",
                    "\(month.bytes)", cutoff.map { month.end <= $0 ? "past retention" : "kept" } ?? "kept",
                ]
            }
        let widths = (0..<5).map { column in (rows.map { $0[column].count }.max() ?? 0) + 1 }
        lines += rows.map { TextColumns.line($0, widths: widths).trimmingCharacters(in: .whitespaces) }
        return lines.joined(separator: "\n")
    }
}
