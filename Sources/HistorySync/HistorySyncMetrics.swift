import AppStoreModels
import Prometheus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The periodic history sync's Prometheus metrics (Docs/history.md lists them), labelled by app and environment, in
/// a registry of its own like the worker's.
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

    /// Metrics for `app`'s history in `environment`, in `registry` (a new one by default). Every series exists from
    /// the start, at 0, so an alert sees the first increase.
    package init(
        app: String,
        environment: AppStoreEnvironment,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
    ) {
        self.registry = registry
        let labels = [("app", app), ("environment", environment.rawValue)]
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
    }

    /// Counts what one page put on the raw topic.
    func countPage(notifications count: Int) {
        pages.increment()
        notifications.increment(by: Int64(count))
    }

    /// Records a finished turn: succeeded (its window complete) or failed, and how long it took.
    func recordTurn(succeeded: Bool, duration: Duration) {
        if succeeded {
            succeededTurns.increment()
            lastSuccess.set(Date().timeIntervalSince1970)
        } else {
            failedTurns.increment()
        }
        lastTurnDuration.set(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
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
