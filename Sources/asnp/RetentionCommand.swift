import ArgumentParser
import CommandSupport
import Foundation
import Logging
import NotificationStore
import PipelineReports
import PipelineServices
import PostgresRuntime

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
            let report = try await NotificationStore.withRunning(configuration: configuration, logger: logger) {
                try await RetentionReport.run(on: $0, retainMonths: retainMonths, apply: apply, dryRun: dryRun)
            }
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
}
