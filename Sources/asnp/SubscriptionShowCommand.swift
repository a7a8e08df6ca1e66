import ArgumentParser
import CommandSupport
import Foundation
import Logging
import NotificationStore
import PipelineReports
import PipelineServices

/// `asnp subscription show`: a subscription's current state and its notification timeline.
struct SubscriptionShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a subscription's current state and its notifications, oldest first by signedDate.",
        discussion: """
            Reads PostgreSQL (database.url). The state is merged from the subscription's notifications by the \
            rules of Docs/entitlement.md; "entitled" says whether the customer has access now. The timeline lists \
            every stored notification of the subscription. Exit 1 if none is stored, 3 if the database cannot be read.
            """
    )

    @Argument(help: "The subscription's originalTransactionId.")
    var originalTransactionId: String?

    @Option(
        help: """
            Instead of one subscription: every subscription of this customer, the appAccountToken your app gave at \
            purchase.
            """
    )
    var accountToken: String?

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(help: "The most notifications to list.")
    var limit = 1_000

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func validate() throws {
        guard (originalTransactionId == nil) != (accountToken == nil) else {
            throw ValidationError("give either an originalTransactionId or --account-token")
        }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.subscription")
        logger.logLevel = .error
        let settings = try await PipelineSettings.load(file: config)
        let database = try settings.database()
        if let accountToken {
            let report = try await NotificationStore.withRunning(configuration: database, logger: logger) {
                try await CustomerReport.read(from: $0, appAccountToken: accountToken)
            }
            guard let report else {
                FileHandle.standardError.write(
                    Data("no subscription of account token \(accountToken) is stored\n".utf8)
                )
                throw CLIExit.rejected
            }
            if json { TextColumns.printJSON(report) } else { print(report.text()) }
            return
        }
        guard let id = originalTransactionId else { return }
        let limit = limit
        let report = try await NotificationStore.withRunning(configuration: database, logger: logger) {
            try await SubscriptionReport.read(from: $0, originalTransactionId: id, limit: limit)
        }
        guard let report else {
            FileHandle.standardError.write(Data("no notification of subscription \(id) is stored\n".utf8))
            throw CLIExit.rejected
        }
        if json {
            TextColumns.printJSON(report)
        } else {
            print(report.text())
        }
    }
}
