import ArgumentParser
import CommandSupport
import Foundation
import Logging
import NotificationStore
import PipelineServices

/// `asnp retention`: the months of raw bodies kept, and dropping those past the retention setting.
struct RetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Show the months of raw bodies kept; drop those past retention.retainBodyMonths.",
        discussion: """
            Raw bodies and decoded JSON live in notification_bodies, one table a UTC month of receipt; the facts \
            (notifications, subscriptions) stay for good. Without --apply, lists each month with its size and \
            whether retention drops it. With --apply, drops every month that ended before the current month and \
            the retention.retainBodyMonths (RETENTION_RETAIN_BODY_MONTHS) months before it: whole tables, no \
            DELETE. A month holding notifications whose decoded events still wait in the outbox is kept until \
            they are published (the events are built from the bodies), and named. --dry-run with --apply names them \
            and drops nothing. Run it daily (the production overlay's \
            CronJob does); it is safe to run at any time and from several places. --apply also deletes the failed \
            deliveries the reconciler recorded (history_deliveries) last reported before the same cutoff.

            The database is --database-url (or DATABASE_URL) when given, otherwise the services' settings. Exit \
            status: 0 done, 2 no retention set for --apply, 3 the database could not be read or a month not dropped.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(help: "Months to keep before the current one (default: retention.retainBodyMonths).")
    var retainMonths: Int?

    @Flag(help: "Drop the months past retention.")
    var apply = false

    @Flag(help: "With --apply: name the months it would drop, and drop none.")
    var dryRun = false

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func validate() throws {
        if dryRun, !apply { throw ValidationError("--dry-run goes with --apply") }
        if let retainMonths, retainMonths < 0 { throw ValidationError("--retain-months cannot be negative") }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.retention")
        logger.logLevel = .notice
        let settings = try await PipelineSettings.load(file: config)
        let configuration = try await database.configuration(configFile: config) { settings }
        let retainMonths = try self.retainMonths ?? settings.int("retention.retainBodyMonths")
        if apply, retainMonths == nil {
            FileHandle.standardError.write(
                Data("asnp retention: no retention set: retention.retainBodyMonths or --retain-months\n".utf8)
            )
            throw CLIExit.usage
        }
        let (apply, dryRun) = (self.apply, self.dryRun)
        do {
            let (partitions, retention, deliveries) = try await NotificationStore.withRunning(
                configuration: configuration,
                logger: logger
            ) { store in
                let retention =
                    apply
                    ? try await store.applyBodyRetention(keepMonths: retainMonths ?? 0, dryRun: dryRun)
                    : BodyRetention()
                let deliveries =
                    apply && !dryRun
                    ? try await store.deleteHistoryDeliveries(
                        fetchedBefore: NotificationStore.retentionCutoff(keepMonths: retainMonths ?? 0)
                    ) : 0
                return (try await store.bodyPartitions(), retention, deliveries)
            }
            let report = Report(
                retainMonths: retainMonths,
                cutoff: retainMonths.map { Report.instant(NotificationStore.retentionCutoff(keepMonths: $0)) },
                dropped: apply && !dryRun ? retention.dropped.map(\.name) : [],
                wouldDrop: dryRun ? retention.dropped.map(\.name) : [],
                held: retention.held.map(Report.Held.init),
                deletedFailedDeliveries: deliveries,
                months: (dryRun
                    ? partitions : partitions.filter { kept in !retention.dropped.contains { $0.name == kept.name } })
                    .map(Report.Month.init)
            )
            if json {
                TextColumns.printJSON(report)
            } else {
                print(report.text)
            }
        } catch {
            FileHandle.standardError.write(Data("asnp retention: \(configuration.redactedURL): \(error)\n".utf8))
            throw CLIExit.failed
        }
    }

    /// What the command found and did.
    struct Report: Encodable {
        struct Month: Encodable {
            var name: String
            /// RFC 3339, as every instant of the report.
            var start: String
            var end: String
            var bytes: Int64
            /// PostgreSQL's estimate; -1 before the month was first analyzed.
            var estimatedRows: Int64

            init(_ partition: BodyPartition) {
                (name, start, end, bytes, estimatedRows) = (
                    partition.name, instant(partition.start), instant(partition.end), partition.bytes,
                    partition.estimatedRows
                )
            }
        }

        /// A month past retention kept because decoded events of its notifications wait in the outbox.
        struct Held: Encodable {
            var name: String
            var unpublishedEvents: Int

            init(_ held: BodyRetention.HeldMonth) {
                (name, unpublishedEvents) = (held.partition.name, held.unpublishedEvents)
            }
        }

        static func instant(_ date: Date) -> String {
            ISO8601DateFormatter().string(from: date)
        }

        var retainMonths: Int?
        /// Months ending on or before this are dropped.
        var cutoff: String?
        var dropped: [String]
        var wouldDrop: [String]
        /// Months past retention kept until their events are published.
        var held: [Held]
        /// Rows of history_deliveries deleted (last reported before the cutoff).
        var deletedFailedDeliveries: Int
        var months: [Month]

        var text: String {
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
}
