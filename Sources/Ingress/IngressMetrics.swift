import AppStoreModels
import CoreMetrics
import KafkaClient
import Metrics
import PipelineContract
import Prometheus
import Synchronization

/// The ingress's Prometheus metrics, served on `GET /metrics` (Docs/ingress.md lists them).
///
/// Made from a factory of their own rather than the process-wide `MetricsSystem`, so several ingresses (tests) keep
/// separate counts and `asnp` needs no global bootstrap for them.
final class IngressMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Counters with dimensions, made on first use, by label and dimensions.
    private let counters = Mutex<[String: CoreMetrics.Counter]>([:])
    /// `asnp_ingress_requests_total` by route and status, made on first use: counted on every request, so looked up
    /// without building a key string.
    private let requestCounters = Mutex<[RequestKey: CoreMetrics.Counter]>([:])
    /// From a complete body to the broker's acknowledgement (or the failure), in seconds.
    let acknowledgementDuration: Metrics.Timer
    /// Bytes of the bodies accepted for producing.
    let receivedBytes: CoreMetrics.Counter
    /// Notification requests being handled now.
    let inFlightRequests: CoreMetrics.Gauge
    /// Notification requests answered 503 because `ingress.maxConcurrentRequests` were in progress.
    let busyRefusals: CoreMetrics.Counter
    /// Messages handed to librdkafka and not yet acknowledged, sampled at each scrape.
    let producerQueueDepth: CoreMetrics.Gauge
    /// The raw topic's record batches, the messages in them, and their bytes after compression, as the producer's
    /// statistics last reported them.
    private let rawTopicBatches: CoreMetrics.Counter
    private let rawTopicMessages: CoreMetrics.Counter
    private let rawTopicBytes: CoreMetrics.Counter
    /// The producer's totals already added to the three counters above.
    private let rawTopicExported = Mutex(KafkaProducerStatistics.Topic())

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = [
            "asnp_ingress_ack_duration_seconds": [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                .seconds(2.5), .seconds(5), .seconds(10),
            ]
        ]
        self.factory = factory
        acknowledgementDuration = Metrics.Timer(label: "asnp_ingress_ack_duration_seconds", factory: factory)
        receivedBytes = CoreMetrics.Counter(label: "asnp_ingress_received_bytes_total", factory: factory)
        inFlightRequests = CoreMetrics.Gauge(label: "asnp_ingress_in_flight_requests", factory: factory)
        busyRefusals = CoreMetrics.Counter(label: "asnp_ingress_busy_refusals_total", factory: factory)
        producerQueueDepth = CoreMetrics.Gauge(label: "asnp_ingress_producer_queue_depth", factory: factory)
        rawTopicBatches = CoreMetrics.Counter(label: "asnp_ingress_raw_topic_batches_total", factory: factory)
        rawTopicMessages = CoreMetrics.Counter(label: "asnp_ingress_raw_topic_messages_total", factory: factory)
        rawTopicBytes = CoreMetrics.Counter(label: "asnp_ingress_raw_topic_bytes_total", factory: factory)
    }

    /// Brings the raw-topic counters up to `totals`, the producer's figures since it started (they only grow).
    func recordRawTopic(_ totals: KafkaProducerStatistics.Topic) {
        let added = rawTopicExported.withLock { exported in
            let added = KafkaProducerStatistics.Topic(
                batches: max(0, totals.batches - exported.batches),
                messages: max(0, totals.messages - exported.messages),
                bytes: max(0, totals.bytes - exported.bytes)
            )
            exported = totals
            return added
        }
        rawTopicBatches.increment(by: added.batches)
        rawTopicMessages.increment(by: added.messages)
        rawTopicBytes.increment(by: added.bytes)
    }

    /// Counts one answered request by route (the route's pattern, such as `/v2/notifications/{environment}`, or
    /// `unmatched`) and status code.
    func countRequest(route: String, status: Int) {
        let key = RequestKey(route: route, status: status)
        let counter = requestCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = CoreMetrics.Counter(
                label: "asnp_ingress_requests_total",
                dimensions: [
                    ("route", route), ("status", String(status)),
                ],
                factory: factory
            )
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    private struct RequestKey: Hashable {
        var route: String
        var status: Int
    }

    /// Counts a body the broker did not acknowledge, by KafkaError code (or `TIMED_OUT` for the request deadline).
    func countProduceFailure(code: String) {
        counter(
            label: "asnp_ingress_produce_failures_total",
            dimensions: [
                ("code", code)
            ]
        ).increment()
    }

    /// Counts a notification refused because the configuration cannot verify it
    /// (``NotificationTarget/unverifiableReason``).
    func countUnverifiable(_ target: NotificationTarget) {
        counter(
            label: "asnp_ingress_unverifiable_total",
            dimensions: [
                ("app", target.app.name), ("environment", target.environment.rawValue),
                ("version", "\(target.version)"),
            ]
        ).increment()
    }

    private func counter(label: String, dimensions: [(String, String)]) -> CoreMetrics.Counter {
        let key = label + "{" + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
        return counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = CoreMetrics.Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = counter
            return counter
        }
    }
}
