import AppStoreModels
import CoreMetrics
import HistorySync
import KafkaClient
import NotificationStore
import PipelineContract
import Prometheus
import ReadAPI

@testable import Ingress
@testable import Worker

/// What the ingress, the worker, the reconciler and the read API export, for the tests that hold dashboards and alert rules to the
/// code.
enum ExportedMetrics {
    /// Every metric the ingress, the worker, the periodic history sync and the read API export, each made at least once, with its
    /// label names. The worker's include the store's gauge it samples, `asnp_store_oldest_body_timestamp_seconds`.
    static func labelsByName() -> [String: Set<String>] {
        let ingress = IngressMetrics(registry: PrometheusCollectorRegistry())
        ingress.countRequest(route: "v2", status: 503)
        ingress.countProduceFailure(code: "TIMED_OUT")
        ingress.countUnverifiable(
            NotificationTarget(version: 2, environment: .production, app: PipelineApp(name: "notes", bundleID: "b"))
        )
        ingress.acknowledgementDuration.recordMilliseconds(1)
        let worker = WorkerMetrics()
        let partition = KafkaTopicPartition(topic: "raw", partition: 0)
        let error = KafkaError(code: .fatal, reason: "refused")
        worker.countRejected(status: "UNKNOWN_APP", count: 1)
        worker.countFailedBatch(stage: "store", code: "UNAVAILABLE")
        worker.countLost(KafkaOffsetGap(topicPartition: partition, offsets: 0..<1, logStartOffset: 1))
        worker.countRewound(partition, offsets: 1)
        worker.countRefused(stream: OutboxStream(rawValue: "decoded"), error: error)
        worker.countUnacknowledged(stream: OutboxStream(rawValue: "decoded"), error: error)
        worker.setSampleAge(.outbox, seconds: 1)
        worker.setSampleAge(.bodies, seconds: 1)
        for stage in WorkerMetrics.FreshnessStage.allCases {
            worker.freshness(stage, stage.labelNames.map { ($0, "x") }).record(.seconds(1))
        }
        worker.setLag([
            KafkaPartitionLag(topicPartition: partition, committedOffset: 0, lowWatermark: 0, highWatermark: 1)
        ])
        // Every series of the history sync exists from its start.
        let history = HistorySyncMetrics(app: "notes", environment: .production)
        let api = ReadAPIMetrics()
        // A route without braces: the sample parser below reads label values up to the first `}`.
        api.countRequest(route: "unmatched", status: 200, key: "k", duration: .zero)
        var metrics: [String: Set<String>] = [:]
        for registry in [ingress.registry, worker.registry, history.registry, api.registry] {
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("# TYPE ") {
                    metrics[String(line.split(separator: " ")[2]), default: []] = []
                } else if let sample = line.firstMatch(of: /^([a-z_]+)\{([^}]*)\}/) {
                    let name = String(sample.output.1).replacing(/_(bucket|sum|count)$/, with: "")
                    let labels = sample.output.2.matches(of: /([a-z_]+)="/).map { String($0.output.1) }
                    metrics[name, default: []].formUnion(labels.filter { $0 != "le" })
                }
            }
        }
        return metrics
    }
}
