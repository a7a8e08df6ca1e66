import CoreMetrics
import Metrics
import Prometheus
import Synchronization

/// The read API's Prometheus metrics, served on the status port's `/metrics` (Docs/api.md lists them).
package final class ReadAPIMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let requestCounters = Mutex<[RequestKey: CoreMetrics.Counter]>([:])
    private let durations = Mutex<[String: Metrics.Timer]>([:])
    /// Keys in the keyring in use.
    let keys: CoreMetrics.Gauge
    /// Readings of the keys file that could not be used (the keys read before stay in use).
    let keyReloadFailures: CoreMetrics.Counter

    private struct RequestKey: Hashable {
        var route: String
        var status: Int
        var key: String
    }

    package init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2.5), .seconds(5),
        ]
        self.factory = factory
        keys = CoreMetrics.Gauge(label: "asnp_api_keys", factory: factory)
        keyReloadFailures = CoreMetrics.Counter(label: "asnp_api_keys_reload_failures_total", factory: factory)
    }

    /// Counts an answered request (`asnp_api_requests_total`) by route pattern (or `unmatched`), status code and key
    /// id (empty before a key is known), and records its duration by route (`asnp_api_request_duration_seconds`).
    package func countRequest(route: String, status: Int, key: String, duration: Duration) {
        let requestKey = RequestKey(route: route, status: status, key: key)
        let counter = requestCounters.withLock { counters in
            if let counter = counters[requestKey] { return counter }
            let counter = CoreMetrics.Counter(
                label: "asnp_api_requests_total",
                dimensions: [("route", route), ("status", "\(status)"), ("key", key)],
                factory: factory
            )
            counters[requestKey] = counter
            return counter
        }
        counter.increment()
        let timer = durations.withLock { timers in
            if let timer = timers[route] { return timer }
            let timer = Metrics.Timer(
                label: "asnp_api_request_duration_seconds",
                dimensions: [("route", route)],
                factory: factory
            )
            timers[route] = timer
            return timer
        }
        timer.recordNanoseconds(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        )
    }
}
