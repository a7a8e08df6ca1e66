import AppStoreModels
import ArgumentParser
import CommandSupport
import Foundation
import HistorySync
import Logging
import PipelineServices
import Synchronization

/// `asnp history sync`: pull a window of Apple's notification history into the raw topic, once or periodically.
struct HistorySyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Feed Apple's notification history for a time window into the raw topic.",
        discussion: """
            Calls Get Notification History (App Store Server API) with each app's In-App Purchase key \
            (apps.{name}.api.keyId, .issuerId, .privateKey or .privateKeyFile) and puts every notification on the \
            raw topic as the ingress would (header asnp-source: history); the workers verify it and drop what they \
            already stored. Without --app, every app with a key; without --environment, every one of \
            history.environments (production and sandbox). Each page is recorded in the coverage ledger \
            (history_ledger, shown by `asnp history status`): ranges covered are not fetched again, a range in \
            progress resumes at its page, so running the same command again (with or without --until) resumes. \
            Apple keeps 180 days of production history and 30 days of sandbox history: older parts of the window \
            are recorded as lost. With --every, runs as a service: each turn syncs from the ledger's last unbroken \
            run (the first turn: the last --lookback) up to now, with the same filters, then takes a second look at \
            what earlier turns covered of the last history.secondLookSeconds (6 hours; Apple may list a \
            notification hours after it sent it) and feeds what Apple listed late; /health/live, /health/ready and \
            /metrics answer on history.statusHost:history.statusPort (0.0.0.0:9090). SIGTERM or SIGINT: stop after \
            the page in hand.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(help: "One app (apps.names); default: every app with an API key.")
    var app: String?

    @Option(help: "production or sandbox; default: each of history.environments.")
    var environment: String?

    @Option(help: "The window's start, ISO 8601 (2026-11-01T00:00:00Z).")
    var since: String?

    @Option(help: "The window's end, ISO 8601 (default: now, less the 5 minutes Apple's history may lag).")
    var until: String?

    @Flag(help: "Only notifications Apple could not deliver.")
    var onlyFailures = false

    @Option(help: "Only one customer's notifications (any of their transaction ids); not with --type.")
    var transactionId: String?

    @Option(help: "Only this notification type (e.g. DID_RENEW).")
    var type: String?

    @Option(help: "Only this subtype (with --type).")
    var subtype: String?

    @Flag(help: "Sync the window again from its start even if it was synced before.")
    var restart = false

    @Option(help: "Run periodically: seconds between turns (each turn syncs the last --lookback).")
    var every: Int?

    @Option(help: "With --every: seconds of history the first turn reaches back (default 3 × --every).")
    var lookback: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        if let environment, !["production", "sandbox"].contains(environment.lowercased()) {
            throw ValidationError("--environment must be production or sandbox")
        }
        if transactionId != nil, type != nil {
            throw ValidationError("Apple takes either --transaction-id or --type, not both")
        }
        if subtype != nil, type == nil { throw ValidationError("--subtype needs --type") }
        if let every {
            guard every > 0 else { throw ValidationError("--every must be a positive number of seconds") }
            guard since == nil, until == nil else { throw ValidationError("--every takes --lookback, not --since") }
            guard !restart else { throw ValidationError("--restart is for one window, not --every") }
        } else {
            guard since != nil else { throw ValidationError("give --since (or --every for periodic runs)") }
            guard lookback == nil else { throw ValidationError("--lookback goes with --every") }
        }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.history")
        logger.logLevel = logLevel
        let settings = try await PipelineSettings.load(file: config)
        let role = try settings.historyRole(
            appName: app,
            environment: environment.map { $0.lowercased() == "production" ? .production : .sandbox }
        )
        let display = ProgressLine()
        let schedule: HistorySyncSchedule
        if let every {
            schedule = .periodic(
                interval: .seconds(every),
                lookback: .seconds(lookback ?? every * 3),
                turn: { outcome in
                    if case .success(let progress) = outcome { display.finish(progress) }
                }
            )
        } else {
            let start = try Self.date(since ?? "", "--since")
            let end = try until.map { try Self.date($0, "--until") }
            if let end, start >= end { throw ValidationError("--since must be before --until") }
            schedule = .window(
                start: start,
                end: end,
                restart: restart,
                progress: { display.update($0) },
                finished: { display.finish($0) }
            )
        }
        let filter = NotificationHistoryFilter(
            notificationType: type,
            notificationSubtype: subtype,
            transactionID: transactionId,
            onlyFailures: onlyFailures
        )
        let sync = try buildHistorySync(role, filter: filter, schedule: schedule, logger: logger)
        do {
            try await sync.run(logger: logger)
        } catch let error as HistorySyncError {
            // The ledger keeps what was done: running the command again resumes.
            let hint = error.isRetriable ? " (run the same command again to resume)" : ""
            FileHandle.standardError.write(Data("\nasnp history sync: \(error)\(hint)\n".utf8))
            throw CLIExit.failed
        }
    }

    private static func date(_ text: String, _ option: String) throws -> Date {
        guard let date = try? Date(text, strategy: .iso8601) else {
            throw ValidationError("\(option) must be an ISO 8601 time such as 2026-11-01T00:00:00Z, not '\(text)'")
        }
        return date
    }
}

/// Progress on standard error while a window syncs, and a summary line on standard output at its end.
private final class ProgressLine: Sendable {
    private let started = ContinuousClock.now

    func update(_ progress: HistorySyncProgress) {
        let elapsed = started.duration(to: .now).components
        let seconds = max(0.001, Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        let rate = Double(progress.notifications) / seconds
        let line =
            "\rhistory: \(progress.key): page \(progress.pages), \(progress.notifications) notifications"
            + String(format: " (%.0f/s)", rate)
            + (progress.requests.rateLimited > 0 ? ", rate-limited \(progress.requests.rateLimited)×" : "")
            + (progress.requests.retried > 0 ? ", retried \(progress.requests.retried)×" : "")
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish(_ progress: HistorySyncProgress) {
        if progress.pages > 0 { FileHandle.standardError.write(Data("\n".utf8)) }
        let state =
            progress.isComplete
            ? (progress.pages == 0 && progress.lostRanges.isEmpty ? "already covered" : "covered")
            : "stopped; run again to resume"
        let window =
            "\(progress.window.lowerBound.formatted(.iso8601))..<\(progress.window.upperBound.formatted(.iso8601))"
        var details = ["\(progress.notifications) notifications in \(progress.pages) pages"]
        if progress.resumedRanges > 0 { details.append("\(progress.resumedRanges) ranges resumed") }
        if progress.restarts > 0 { details.append("\(progress.restarts) restarts") }
        if progress.secondLookNotifications > 0 {
            details.append("\(progress.secondLookNotifications) found by a second look (Apple listed them late)")
        }
        if !progress.failedDeliveries.isEmpty {
            let failed = progress.failedDeliveries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            details.append("failed deliveries: " + failed.joined(separator: ", "))
        }
        if !progress.lostRanges.isEmpty {
            let lost = progress.lostRanges.map {
                "\($0.lowerBound.formatted(.iso8601))..<\($0.upperBound.formatted(.iso8601))"
            }
            details.append("lost (older than Apple keeps): " + lost.joined(separator: ", "))
        }
        let summary = "history: \(progress.key) \(window): \(state); " + details.joined(separator: "; ") + "\n"
        FileHandle.standardOutput.write(Data(summary.utf8))
    }
}
