import KafkaClient
import NotificationStore
import Prometheus
import Synchronization

/// The worker's Prometheus metrics (Docs/worker.md lists them), in a registry of its own so several workers in one
/// process (tests, `asnp dev`) keep separate counts.
package final class WorkerMetrics: Sendable {
    /// Everything the worker measures; serve it on `/metrics`.
    package let registry: PrometheusCollectorRegistry
    /// Consumed messages whose batch was stored (counted once per stored batch, not per attempt).
    let storedMessages: Counter
    /// Stored notifications new to the store.
    let newNotifications: Counter
    /// Stored notifications the store already held (redeliveries, Apple's retries).
    let duplicateNotifications: Counter
    /// Messages per stored partition batch.
    let batchSize: ValueHistogram
    /// Verifying and decoding one partition batch.
    let verificationDuration: DurationHistogram
    /// One PostgreSQL transaction storing partition batches (``GroupCommitWriter``).
    let storeDuration: DurationHistogram
    /// Partition batches per stored transaction.
    let transactionBatches: ValueHistogram
    /// Output events the broker acknowledged.
    let publishedEvents: Counter
    /// Partition batches refused because another member claimed their partition since this one did (the ownership
    /// fence): nothing of them was stored, and the partition is let go.
    let fencedBatches: Counter
    /// Claims of partitions that failed (PostgreSQL unavailable), each tried again after a backoff.
    let failedClaims: Counter
    /// Offset commits that held, and those refused (tried again): one for the partition batches that ended together.
    private let commits: Counter
    private let refusedCommits: Counter
    /// Partitions paused after a failed batch, waiting out their backoff.
    let pausedPartitions: Gauge
    /// Rows waiting in the outbox (all partitions), sampled in the background (``WorkerMetricsSampler``).
    let outboxRows: Gauge
    /// Outbox rows set aside after the broker refused their events for good (all partitions), sampled likewise.
    let refusedOutboxRows: Gauge
    /// The age of the oldest row waiting in the outbox (0: none), sampled likewise: events not yet out that long.
    let oldestOutboxRowAge: Gauge
    /// The start of the oldest month of raw bodies kept (`notification_bodies`), in seconds since 1970 (0: none),
    /// sampled likewise: retention drops months from the old end, so an age past the retention shows it not running.
    let oldestBody: Gauge
    /// The months after the current one whose body partitions exist, sampled likewise.
    let bodyMonthsAhead: Gauge
    /// The group's consumer lag per raw-topic partition, sampled likewise.
    private let lagGauges = Mutex<[KafkaTopicPartition: Gauge]>([:])

    /// What ``WorkerMetricsSampler`` samples, each with the age of its last success.
    enum Sample: String, CaseIterable, Sendable {
        case outbox
        case consumerLag = "consumer_lag"
        case bodies
    }

    /// Metrics in `registry` (a new one by default).
    package init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        storedMessages = registry.makeCounter(
            descriptor: Self.name("messages", "total", "Consumed messages whose batch was stored and committed.")
        )
        newNotifications = registry.makeCounter(
            descriptor: Self.name("notifications", "total", "Stored notifications, new or duplicate."),
            labels: [("result", "new")]
        )
        duplicateNotifications = registry.makeCounter(
            descriptor: Self.name("notifications", "total", "Stored notifications, new or duplicate."),
            labels: [("result", "duplicate")]
        )
        batchSize = registry.makeValueHistogram(
            descriptor: Self.name("batch", "messages", "Messages per stored partition batch."),
            buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000]
        )
        let durations: [Duration] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
            .seconds(10), .seconds(30),
        ]
        verificationDuration = registry.makeDurationHistogram(
            descriptor: Self.name("verify_duration", "seconds", "Verifying and decoding one partition batch."),
            buckets: durations
        )
        storeDuration = registry.makeDurationHistogram(
            descriptor: Self.name(
                "store_duration",
                "seconds",
                "One PostgreSQL transaction storing partition batches (those ready at the same time)."
            ),
            buckets: durations
        )
        transactionBatches = registry.makeValueHistogram(
            descriptor: Self.name("transaction", "batches", "Partition batches per stored transaction."),
            buckets: [1, 2, 4, 8, 16, 32, 64]
        )
        publishedEvents = registry.makeCounter(
            descriptor: Self.name("published_events", "total", "Output events the broker acknowledged.")
        )
        fencedBatches = registry.makeCounter(
            descriptor: Self.name(
                "fenced_batches",
                "total",
                "Partition batches refused because another member claimed their partition since."
            )
        )
        failedClaims = registry.makeCounter(
            descriptor: Self.name("failed_claims", "total", "Claims of partitions that failed, to be tried again.")
        )
        let commitsHelp = "Offset commits of stored partition batches (those that ended together share one)."
        commits = registry.makeCounter(
            descriptor: Self.name("offset_commits", "total", commitsHelp),
            labels: [("result", "committed")]
        )
        refusedCommits = registry.makeCounter(
            descriptor: Self.name("offset_commits", "total", commitsHelp),
            labels: [("result", "refused")]
        )
        pausedPartitions = registry.makeGauge(
            descriptor: Self.name("paused", "partitions", "Partitions paused after a failed batch.")
        )
        outboxRows = registry.makeGauge(
            descriptor: Self.name(
                "outbox",
                "rows",
                "Rows waiting in the outbox, all partitions (sampled in the background)."
            )
        )
        refusedOutboxRows = registry.makeGauge(
            descriptor: Self.name(
                "outbox_refused",
                "rows",
                "Outbox rows set aside after the broker refused their events for good, all partitions (sampled)."
            )
        )
        oldestOutboxRowAge = registry.makeGauge(
            descriptor: Self.name(
                "outbox_oldest_age",
                "seconds",
                "Age of the oldest row waiting in the outbox, all partitions (0: none; sampled in the background)."
            )
        )
        // The store's, not the worker's own: named for what it describes (any worker's scrape shows the same value).
        oldestBody = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "asnp",
                subsystem: "store",
                metricName: "oldest_body_timestamp",
                unitName: "seconds",
                helpText:
                    "The start of the oldest month of raw bodies kept, in seconds since 1970 (0: none; sampled)."
            )
        )
        bodyMonthsAhead = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "asnp",
                subsystem: "store",
                metricName: "body_months_ahead",
                unitName: "",
                helpText:
                    "UTC months after the current one whose body partitions are made (the workers keep 3; sampled)."
            )
        )
    }

    /// Counts an output event the broker refused for good (its outbox row set aside), by stream and broker error.
    func countRefused(stream: OutboxStream, error: KafkaError) {
        registry.makeCounter(
            descriptor: Self.name(
                "refused_events",
                "total",
                "Output events the broker refused for good; their outbox rows are set aside."
            ),
            labels: [("stream", stream.rawValue), ("error", error.rdKafkaError ?? error.code.rawValue)]
        ).increment()
    }

    /// Counts an outbox row whose event cannot be built (its body gone), set aside, by stream.
    func countUnpublishable(stream: OutboxStream) {
        registry.makeCounter(
            descriptor: Self.name(
                "unpublishable_events",
                "total",
                "Outbox rows whose event cannot be built (a body gone); they are set aside, never deleted."
            ),
            labels: [("stream", stream.rawValue)]
        ).increment()
    }

    /// Counts output events sent and not acknowledged (kept in the outbox and sent again: a consumer may then see
    /// one twice, if the broker stored it before the acknowledgement was lost), by stream and error.
    func countUnacknowledged(stream: OutboxStream, error: KafkaError) {
        registry.makeCounter(
            descriptor: Self.name(
                "unacknowledged_events",
                "total",
                "Output events sent and not acknowledged; their outbox rows are kept and sent again."
            ),
            labels: [("stream", stream.rawValue), ("error", error.rdKafkaError ?? error.code.rawValue)]
        ).increment()
    }

    /// Counts consumed messages rejected, by status; those rejected for the worker's configuration also apart.
    func countRejected(status: String, count: Int) {
        registry.makeCounter(
            descriptor: Self.name("rejected", "total", "Consumed messages stored as rejected, by status."),
            labels: [("status", status)]
        ).increment(by: Int64(count))
        guard VerifierDirectory.configurationStatuses.contains(status) else { return }
        registry.makeCounter(
            descriptor: Self.name(
                "configuration_rejections",
                "total",
                "Messages rejected because this worker's settings cannot verify them; fix them, then replay."
            ),
            labels: [("status", status)]
        ).increment(by: Int64(count))
    }

    /// One offset commit ended, held or refused.
    func countCommit(committed: Bool) {
        (committed ? commits : refusedCommits).increment()
    }

    /// Counts a batch that was not stored and will be tried again, by the stage and the error's code.
    func countFailedBatch(stage: String, code: String) {
        registry.makeCounter(
            descriptor: Self.name("failed_batches", "total", "Partition batches not stored, to be tried again."),
            labels: [("stage", stage), ("code", code)]
        ).increment()
    }

    /// Counts messages skipped because the partition no longer held them (``KafkaOffsetGap``).
    func countLost(_ gap: KafkaOffsetGap) {
        registry.makeCounter(
            descriptor: Self.name(
                "lost_messages",
                "total",
                "Raw-topic messages deleted (retention) before this group consumed them; run the reconciler."
            ),
            labels: [("topic", gap.topicPartition.topic), ("partition", String(gap.topicPartition.partition))]
        ).increment(by: gap.count)
    }

    /// Counts a partition rewound to what the database holds (restored to an earlier point), and the offsets it
    /// consumes again.
    func countRewound(_ partition: KafkaTopicPartition, offsets: Int64) {
        let labels = [("topic", partition.topic), ("partition", String(partition.partition))]
        registry.makeCounter(
            descriptor: Self.name(
                "partitions_rewound",
                "total",
                "Partitions rewound because the database held them through less than the group had committed."
            ),
            labels: labels
        ).increment()
        registry.makeCounter(
            descriptor: Self.name(
                "rewound_messages",
                "total",
                "Raw-topic offsets consumed again after a rewind to what the database holds."
            ),
            labels: labels
        ).increment(by: max(0, offsets))
    }

    /// Sets the group's lag per partition; partitions no longer in the topic are dropped from the output.
    func setLag(_ lags: [KafkaPartitionLag]) {
        lagGauges.withLock { gauges in
            let present = Set(lags.map(\.topicPartition))
            for (partition, gauge) in gauges where !present.contains(partition) {
                registry.unregisterGauge(gauge)
                gauges[partition] = nil
            }
            for lag in lags {
                let gauge =
                    gauges[lag.topicPartition]
                    ?? registry.makeGauge(
                        descriptor: Self.name(
                            "consumer_lag",
                            "messages",
                            "The group's messages not yet committed, per raw-topic partition (sampled in the background)."
                        ),
                        labels: [
                            ("topic", lag.topicPartition.topic), ("partition", String(lag.topicPartition.partition)),
                        ]
                    )
                gauges[lag.topicPartition] = gauge
                gauge.set(Double(lag.lag))
            }
        }
    }

    /// Sets how long ago `sample` last succeeded (-1: never).
    func setSampleAge(_ sample: Sample, seconds: Double) {
        registry.makeGauge(
            descriptor: Self.name(
                "metrics_sample_age",
                "seconds",
                "Seconds since a background sample of database or Kafka gauges last succeeded (-1: never)."
            ),
            labels: [("sample", sample.rawValue)]
        ).set(seconds)
    }

    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "asnp", subsystem: "worker", metricName: metric, unitName: unit, helpText: help)
    }
}
