import ArgumentParser
import CommandSupport
import Foundation
import Logging
import NotificationStore
import PipelineReports
import PipelineServices

/// `asnp history status`: the reconciler's coverage ledgers and the failed deliveries Apple reported.
struct HistoryStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what the reconciler covered, has in progress and lost, and Apple's failed deliveries.",
        discussion: """
            Reads history_ledger and history_deliveries (database.url): for each app, environment and filter, the \
            time the ledger holds as settled (covered or lost, unbroken from its first range), every range in \
            progress with the last error met on it, every lost range with why; then the notifications Apple reports \
            failed deliveries for, by the last attempt's result. Exit 3 if the database cannot be read.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Flag(help: "List every range, covered ones too.")
    var all = false

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() async throws {
        var logger = Logger(label: "asnp.history")
        logger.logLevel = .error
        let settings = try await PipelineSettings.load(file: config)
        let report = try await NotificationStore.withRunning(configuration: try settings.database(), logger: logger) {
            try await HistoryLedgerReport.read(from: $0)
        }
        if json {
            TextColumns.printJSON(report)
        } else {
            print(report.lines(detailed: all).joined(separator: "\n"))
        }
    }
}
