import Foundation
import NotificationStore

/// What `asnp status` reports: the store's counts, the worker group's lag and the reconciler's ledgers.
package struct StatusReport: Encodable {
    package var counts: PipelineCounts
    package var kafka: KafkaStatus?
    /// The reconciler's ledgers and the failed deliveries Apple reported; nil when they could not be read.
    package var history: HistoryLedgerReport?
    /// Why not (a schema before version 7: run asnp migrate).
    package var historyError: String?

    package init(counts: PipelineCounts) {
        self.counts = counts
    }

    /// The counts and the ledgers of `store`; the lag is the caller's to add.
    package static func read(from store: NotificationStore) async throws -> StatusReport {
        var report = StatusReport(counts: try await store.counts())
        // The counts are the command's point; the ledgers are reported as unreadable rather than failing it.
        do {
            report.history = try await HistoryLedgerReport.read(from: store)
        } catch {
            report.historyError = "\(error)"
        }
        return report
    }

    package var text: String {
        func breakdown(_ values: [String: Int]) -> String {
            guard !values.isEmpty else { return "-" }
            return values.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }
                .joined(separator: ", ")
        }
        var lines = [
            "notifications   \(counts.notifications)"
                + (counts.lastReceivedAt.map { ", last received \(SubscriptionReport.time($0))" } ?? ""),
            "  by type       \(breakdown(counts.notificationsByType))",
            "subscriptions   \(counts.subscriptions)",
            "  by latest     \(breakdown(counts.subscriptionsByLastType))",
            "rejected        \(counts.rejected) (\(counts.rejectedNotReplayed) not replayed)",
            "  by status     \(breakdown(counts.rejectedByStatus))",
            "outbox          \(counts.outboxRows) event(s) waiting to be published",
        ]
        if let kafka {
            if let lag = kafka.lag {
                let partitions = (kafka.lagByPartition ?? [:]).filter { $0.value > 0 }
                    .sorted { Int($0.key) ?? 0 < Int($1.key) ?? 0 }.map { "\($0.key): \($0.value)" }
                lines.append(
                    "kafka lag       \(lag) on \(kafka.topic) for group \(kafka.group)"
                        + (partitions.isEmpty ? "" : " (partition \(partitions.joined(separator: ", ")))")
                )
            } else {
                lines.append("kafka lag       unknown: \(kafka.error ?? "no answer")")
            }
        }
        if let history {
            lines += history.lines(detailed: false)
        } else {
            lines.append("history         unreadable: \(historyError ?? "unknown error")")
        }
        return lines.joined(separator: "\n")
    }
}
