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
            Calls Get Notification History (App Store Server API) with the app's In-App Purchase key \
            (apps.{name}.api.keyId, .issuerId, .privateKey or .privateKeyFile) and puts every notification on the \
            raw topic as the ingress would (header asnp-source: history); the workers verify it and drop what they \
            already stored. Progress is checkpointed in history_sync after every page: run the same command again to \
            resume. Apple keeps 180 days of production history and 30 days of sandbox history. \
            With --every, runs as a service: each turn syncs the last --lookback, and /health/live, /health/ready \
            and /metrics answer on history.statusHost:history.statusPort (0.0.0.0:9090). SIGTERM or SIGINT: stop \
            after the page in hand.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(help: "The app (apps.names); needed when several are configured.")
    var app: String?

    @Option(help: "production or sandbox.")
    var environment: String

    @Option(help: "The window's start, ISO 8601 (2026-11-01T00:00:00Z).")
    var since: String?

    @Option(help: "The window's end, ISO 8601 (default: now).")
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

    @Option(help: "With --every: seconds of history each turn covers (default 3 × --every).")
    var lookback: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        guard ["production", "sandbox"].contains(environment.lowercased()) else {
            throw ValidationError("--environment must be production or sandbox")
        }
        if transactionId != nil, type != nil {
            throw ValidationError("Apple takes either --transaction-id or --type, not both")
        }
        if subtype != nil, type == nil { throw ValidationError("--subtype needs --type") }
        if let every {
            guard every > 0 else { throw ValidationError("--every must be a positive number of seconds") }
            guard since == nil, until == nil else { throw ValidationError("--every takes --lookback, not --since") }
        } else {
            guard since != nil else { throw ValidationError("give --since (or --every for periodic runs)") }
            guard lookback == nil else { throw ValidationError("--lookback goes with --every") }
        }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.history")
        logger.logLevel = logLevel
        let settings = try await PipelineSettings.load(file: config)
        let role = try settings.historyRole(appName: app)
        let appStoreEnvironment: AppStoreEnvironment = environment.lowercased() == "production" ? .production : .sandbox
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
            schedule = .window(
                try request(),
                restart: restart,
                progress: { display.update($0) },
                finished: { display.finish($0) }
            )
        }
        let sync = try buildHistorySync(role, environment: appStoreEnvironment, schedule: schedule, logger: logger)
        do {
            try await sync.run(logger: logger)
        } catch let error as HistorySyncError {
            // The checkpoint keeps what was done: running the command again resumes.
            let hint = error.isRetriable ? " (run the same command again to resume)" : ""
            FileHandle.standardError.write(Data("\nasnp history sync: \(error)\(hint)\n".utf8))
            throw CLIExit.failed
        }
    }

    private func request() throws -> NotificationHistoryRequest {
        let end = try until.map { try Self.date($0, "--until") } ?? Date()
        let start = try Self.date(since ?? "", "--since")
        guard start < end else { throw ValidationError("--since must be before --until") }
        return NotificationHistoryRequest(
            start: start,
            end: end,
            notificationType: type,
            notificationSubtype: subtype,
            transactionID: transactionId,
            onlyFailures: onlyFailures
        )
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
        let rate = Double(progress.notificationsThisRun) / seconds
        let line =
            "\rhistory: page \(progress.pages), \(progress.notifications) notifications"
            + String(format: " (%.0f/s)", rate)
            + (progress.requests.rateLimited > 0 ? ", rate-limited \(progress.requests.rateLimited)×" : "")
            + (progress.requests.retried > 0 ? ", retried \(progress.requests.retried)×" : "")
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish(_ progress: HistorySyncProgress) {
        if progress.pagesThisRun > 0 { FileHandle.standardError.write(Data("\n".utf8)) }
        let state =
            progress.isComplete
            ? (progress.pagesThisRun == 0 ? "already complete" : "complete") : "stopped; run again to resume"
        let skipped = progress.unfetchableBefore.map { "; before \($0.formatted(.iso8601)) older than Apple keeps" }
        let summary =
            "history: \(progress.window): \(state); \(progress.notifications) notifications in \(progress.pages) pages"
            + " (this run: \(progress.notificationsThisRun) in \(progress.pagesThisRun)"
            + (progress.resumed ? ", resumed" : "") + (progress.restarts > 0 ? ", \(progress.restarts) restarts" : "")
            + ")" + (skipped ?? "") + "\n"
        FileHandle.standardOutput.write(Data(summary.utf8))
    }
}
