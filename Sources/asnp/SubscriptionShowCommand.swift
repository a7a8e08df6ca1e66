import ArgumentParser
import CommandSupport
import Foundation
import Logging
import NotificationStore
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

    struct Report: Encodable {
        var state: SubscriptionState
        var notifications: [StoredNotificationSummary]
    }

    struct CustomerReport: Encodable {
        var appAccountToken: String
        var subscriptions: [SubscriptionState]
    }

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
            let states = try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
                try await store.subscriptions(appAccountToken: accountToken)
            }
            guard !states.isEmpty else {
                FileHandle.standardError.write(
                    Data("no subscription of account token \(accountToken) is stored\n".utf8)
                )
                throw CLIExit.rejected
            }
            let report = CustomerReport(appAccountToken: accountToken, subscriptions: states)
            if json { TextColumns.printJSON(report) } else { print(Self.text(report)) }
            return
        }
        guard let id = originalTransactionId else { return }
        let limit = limit
        let found = try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
            (
                try await store.subscription(originalTransactionId: id),
                try await store.notifications(originalTransactionId: id, limit: limit)
            )
        }
        guard let state = found.0 else {
            FileHandle.standardError.write(Data("no notification of subscription \(id) is stored\n".utf8))
            throw CLIExit.rejected
        }
        let report = Report(state: state, notifications: found.1)
        if json {
            TextColumns.printJSON(report)
        } else {
            print(Self.text(report))
        }
    }

    /// A customer's subscriptions: access now in any of them, then each one's state.
    static func text(_ report: CustomerReport, now: Date = Date()) -> String {
        let access = report.subscriptions.contains { entitlement($0, now: now).hasPrefix("yes") }
        var lines = [
            "customer \(report.appAccountToken): \(access ? "has access" : "no access") now, "
                + "\(report.subscriptions.count) subscription(s)"
        ]
        for state in report.subscriptions { lines += [""] + stateLines(state, now: now) }
        return lines.joined(separator: "\n")
    }

    /// A subscription's state, then its notifications.
    static func text(_ report: Report, now: Date = Date()) -> String {
        func optional(_ value: String?) -> String { value ?? "-" }
        var lines = stateLines(report.state, now: now)
        lines += ["", "notifications (\(report.notifications.count)), oldest first:"]
        let widths = [26, 28, 22, 20, 0]
        lines.append(
            TextColumns.line(["signedDate", "type", "subtype", "transaction", "notificationUUID"], widths: widths)
        )
        for notification in report.notifications {
            lines.append(
                TextColumns.line(
                    [
                        notification.signedDate.map(time) ?? "- (V1)", notification.notificationType,
                        optional(notification.subtype), optional(notification.transactionId),
                        notification.notificationUUID.uuidString.lowercased(),
                    ],
                    widths: widths
                )
            )
        }
        return lines.joined(separator: "\n")
    }

    /// A state's lines: access now, the newest notification, the current purchase, the customer, the renewal.
    static func stateLines(_ state: SubscriptionState, now: Date) -> [String] {
        func optional(_ value: String?) -> String { value ?? "-" }
        return [
            "subscription \(state.originalTransactionId) (\(optional(state.bundleId)), \(optional(state.environment)))",
            "entitled     " + entitlement(state, now: now),
            "state        \(state.lastNotificationType)" + (state.lastSubtype.map { " / \($0)" } ?? "")
                + " at \(time(state.lastSignedDate))",
            "product      \(optional(state.productId)) (\(optional(state.productType))), transaction "
                + optional(state.transactionId) + (state.purchaseDate.map { ", bought \(time($0))" } ?? ""),
            "customer     account token \(optional(state.appAccountToken)), "
                + "\(optional(state.inAppOwnershipType)), group \(optional(state.subscriptionGroupIdentifier))"
                + (state.previousOriginalTransactionId.map { ", replaced subscription \($0)" } ?? ""),
            "expires      \(state.expiresDate.map(time) ?? "-")"
                + (state.renewalDate.map { ", renewal date \(time($0))" } ?? "") + ", auto-renew "
                + (state.autoRenewStatus.map { $0 == 1 ? "on" : "off" } ?? "-")
                + (state.autoRenewProductId.map { " to \($0)" } ?? "")
                + (state.revocationDate.map { ", revoked \(time($0))" } ?? "")
                + (state.isInBillingRetry == true ? ", in billing retry" : "")
                + (state.gracePeriodExpiresDate.map { ", grace period until \(time($0))" } ?? ""),
            "price        " + price(state),
        ]
    }

    /// Apple's status names, by `status`.
    static let statusNames = [1: "active", 2: "expired", 3: "billing retry", 4: "billing grace period", 5: "revoked"]

    /// Whether the customer has access now by Docs/entitlement.md's rule (`entitled` and `entitled_until` against
    /// `now`), with what it rests on: Apple's status for a subscription, the product type for a one-time purchase.
    static func entitlement(_ state: SubscriptionState, now: Date = Date()) -> String {
        let basis: String
        if let status = state.status {
            basis = "status \(status) \(statusNames[status] ?? "unknown")"
        } else {
            basis = state.productType ?? "no status"
        }
        switch (state.entitled, state.entitledUntil) {
        case (true?, let until?) where until > now: return "yes until \(time(until)) (\(basis))"
        case (true?, let until?): return "no: access ended \(time(until)) (\(basis))"
        case (true?, nil): return "yes, with no end (\(basis))"
        case (false?, _): return "no (\(basis))"
        case (nil, _): return "- (Apple's fields do not say: \(basis))"
        }
    }

    /// The price in the currency's units (Apple sends milliunits), and the offer type when there is one.
    static func price(_ state: SubscriptionState) -> String {
        guard let price = state.price else { return "-" }
        let units = "\(price / 1000).\(String(format: "%03d", abs(price % 1000)))"
        return "\(units) \(state.currency ?? "")" + (state.offerType.map { ", offer type \($0)" } ?? "")
    }

    /// RFC 3339 in UTC with milliseconds.
    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
