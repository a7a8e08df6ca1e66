import AppStoreModels
import NotificationStore
import Prometheus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The reconciler's Prometheus metrics for one app and environment (Docs/history.md lists them), labelled by both;
/// every app and environment one process syncs shares one registry.
package final class HistorySyncMetrics: Sendable {
    /// Everything the periodic sync measures; serve it on `/metrics`.
    package let registry: PrometheusCollectorRegistry
    /// Turns that synced their whole window.
    let succeededTurns: Counter
    /// Turns that ended with an error (tried again at the next turn, unless it needs a person).
    let failedTurns: Counter
    /// Pages of history fetched and produced, in any turn.
    let pages: Counter
    /// Notifications put on the raw topic, in any turn.
    let notifications: Counter
    /// When the last turn succeeded, in seconds since 1970 (0 until one has, in this process).
    let lastSuccess: Gauge
    /// How long the last finished turn took, succeeded or failed.
    let lastTurnDuration: Gauge
    /// Ranges fetched to their last page, and ranges recorded as no longer fetchable.
    let coveredRanges: Counter
    let lostRanges: Counter
    /// The ledger (of the unfiltered history) as last saved: the end of its unbroken covered-or-lost run, and the
    /// time it holds as covered and as lost.
    let settledUntil: Gauge
    let coveredSeconds: Gauge
    let lostSeconds: Gauge
    /// Pages of a second look at covered ranges, and the notifications it found that Apple had not listed before.
    let secondLookPages: Counter
    let secondLookNotifications: Counter
    private let labels: [(String, String)]

    /// Metrics for `app`'s history in `environment`, in `registry` (a new one by default). Every series exists from
    /// the start, at 0, so an alert sees the first increase.
    package init(
        app: String,
        environment: AppStoreEnvironment,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
    ) {
        self.registry = registry
        let labels = [("app", app), ("environment", environment.rawValue)]
        self.labels = labels
        let turns = Self.name("turns", "total", "Periodic history sync turns, by outcome (succeeded, failed).")
        succeededTurns = registry.makeCounter(descriptor: turns, labels: labels + [("outcome", "succeeded")])
        failedTurns = registry.makeCounter(descriptor: turns, labels: labels + [("outcome", "failed")])
        pages = registry.makeCounter(
            descriptor: Self.name("pages", "total", "Pages of Apple's notification history fetched and produced."),
            labels: labels
        )
        notifications = registry.makeCounter(
            descriptor: Self.name("notifications", "total", "Notifications from Apple's history put on the raw topic."),
            labels: labels
        )
        lastSuccess = registry.makeGauge(
            descriptor: Self.name(
                "last_success_timestamp",
                "seconds",
                "When a turn last synced its whole window, in seconds since 1970 (0: none since the process started)."
            ),
            labels: labels
        )
        lastTurnDuration = registry.makeGauge(
            descriptor: Self.name("last_turn_duration", "seconds", "How long the last finished turn took."),
            labels: labels
        )
        let ranges = Self.name("ranges", "total", "History ranges fetched completely (covered) or recorded as lost.")
        coveredRanges = registry.makeCounter(descriptor: ranges, labels: labels + [("outcome", "covered")])
        lostRanges = registry.makeCounter(descriptor: ranges, labels: labels + [("outcome", "lost")])
        settledUntil = registry.makeGauge(
            descriptor: Self.name(
                "settled_until_timestamp",
                "seconds",
                "The end of the unbroken covered-or-lost run of the ledger, in seconds since 1970 (0: none yet)."
            ),
            labels: labels
        )
        coveredSeconds = registry.makeGauge(
            descriptor: Self.name("covered", "seconds", "Time the ledger holds as fetched completely."),
            labels: labels
        )
        lostSeconds = registry.makeGauge(
            descriptor: Self.name("lost", "seconds", "Time the ledger holds as lost: older than Apple keeps."),
            labels: labels
        )
        secondLookPages = registry.makeCounter(
            descriptor: Self.name(
                "second_look_pages",
                "total",
                "Pages of Apple's notification history fetched again by a second look at covered ranges."
            ),
            labels: labels
        )
        secondLookNotifications = registry.makeCounter(
            descriptor: Self.name(
                "second_look_notifications",
                "total",
                "Notifications a second look at covered ranges found that Apple had not listed before (Apple's lag)."
            ),
            labels: labels
        )
        for result in Self.knownResults { _ = failedDeliveryCounter(result) }
    }

    /// The results Apple documents for a delivery attempt other than `SUCCESS`: their series exist from the start.
    static let knownResults = [
        "TIMED_OUT", "TLS_ISSUE", "CIRCULAR_REDIRECT", "NO_RESPONSE", "SOCKET_ISSUE", "UNSUPPORTED_CHARSET",
        "INVALID_RESPONSE", "PREMATURE_CLOSE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "OTHER",
    ]

    /// Counts notifications Apple reports failed deliveries for, by the last attempt's result.
    func countFailedDeliveries(_ byResult: [String: Int]) {
        for (result, count) in byResult { failedDeliveryCounter(result).increment(by: Int64(count)) }
    }

    /// Counts a range fetched completely, or recorded as lost.
    func countRange(lost: Bool) {
        (lost ? lostRanges : coveredRanges).increment()
    }

    /// Shows `ledger` as saved (the unfiltered one: a filtered sync covers only part of the history).
    func show(_ ledger: HistoryLedger) {
        settledUntil.set(ledger.settledUntil?.timeIntervalSince1970 ?? 0)
        coveredSeconds.set(ledger.coveredSeconds)
        lostSeconds.set(ledger.lostSeconds)
    }

    private func failedDeliveryCounter(_ result: String) -> Counter {
        registry.makeCounter(
            descriptor: Self.name(
                "failed_deliveries",
                "total",
                "Notifications Apple's history reports a failed delivery attempt for, by the last attempt's result."
            ),
            labels: labels + [("result", result)]
        )
    }

    /// Counts what one page put on the raw topic.
    func countPage(notifications count: Int) {
        pages.increment()
        notifications.increment(by: Int64(count))
    }

    /// Counts a page of a second look: `fed` notifications put on the raw topic, `found` of them first recorded as
    /// listed by this look (a reconciler beside this one may have found the others).
    func countSecondLookPage(fed: Int, found: Int) {
        secondLookPages.increment()
        notifications.increment(by: Int64(fed))
        secondLookNotifications.increment(by: Int64(found))
    }

    /// Records a finished turn: succeeded (its window complete) or failed, and how long it took.
    func recordTurn(succeeded: Bool, duration: Duration) {
        if succeeded {
            succeededTurns.increment()
            lastSuccess.set(Date().timeIntervalSince1970)
        } else {
            failedTurns.increment()
        }
        lastTurnDuration.set(HistorySync.seconds(duration))
    }

    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "asnp",
            subsystem: "history",
            metricName: metric,
            unitName: unit,
            helpText: help
        )
    }
}
