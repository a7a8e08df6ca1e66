import Foundation
import KafkaClient
import Logging
import NotificationStore
import Prometheus
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Samples the worker's gauges that need PostgreSQL or Kafka (the outbox's rows, the raw topic's consumer lag, the
/// oldest month of bodies kept) in the background, each with a timeout, so that a scrape never waits on a dependency:
/// with the database or the brokers down in an incident, `/metrics` still answers at once, with the last values and
/// their age.
///
/// The lag is the consumer group's, for every partition of the raw topic (committed offsets and watermarks), whoever
/// owns them: it keeps growing when every worker is down or crash-looping, and any one worker's scrape shows all of
/// it (aggregate with `max by (topic, partition)` across workers, not `sum`). Run it as a `Service` next to the worker.
package final class WorkerMetricsSampler: Service, Sendable {
    private let configuration: WorkerConfiguration
    private let store: NotificationStore
    private let metrics: WorkerMetrics
    private let logger: Logger
    /// How often the oldest month of bodies is sampled at most: it changes once a month (a day, when retention runs
    /// late), and listing the months sizes each of them.
    static let bodiesSampleInterval: Duration = .seconds(60)
    /// When each sample last succeeded.
    private let lastSuccess = Mutex<[WorkerMetrics.Sample: ContinuousClock.Instant]>([:])

    package init(configuration: WorkerConfiguration, store: NotificationStore, metrics: WorkerMetrics, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.metrics = metrics
        self.logger = logger
    }

    /// Samples every ``WorkerConfiguration/metricsSampleInterval`` until graceful shutdown or cancellation.
    package func run() async throws {
        let admin = try KafkaAdminClient(cluster: configuration.consumer.cluster, logger: logger)
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            await sampleOnce(admin: admin)
            try? await Task.sleep(for: configuration.metricsSampleInterval)
        }
    }

    /// Sets each sample's age (seconds since it last succeeded, -1 never): call before each scrape; never waits.
    package func recordAges() {
        let now = ContinuousClock.now
        let successes = lastSuccess.withLock { $0 }
        for sample in WorkerMetrics.Sample.allCases {
            let age = successes[sample].map { $0.duration(to: now) }
            metrics.setSampleAge(sample, seconds: age.map(\.seconds) ?? -1)
        }
    }

    /// Takes the samples (the bodies' at most every ``bodiesSampleInterval``), each bounded by
    /// ``WorkerConfiguration/metricsSampleTimeout``; a failed or late one is logged at debug and leaves its gauges as
    /// they were.
    func sampleOnce(admin: KafkaAdminClient) async {
        Self.returnFreedMemory()
        let timeout = configuration.metricsSampleTimeout
        await sample(.outbox, within: timeout) { [store, metrics] in
            let counts = try await store.outboxRowCounts()
            metrics.outboxRows.set(Double(counts.pending))
            metrics.refusedOutboxRows.set(Double(counts.refused))
            metrics.oldestOutboxRowAge.set(max(0, counts.oldestPendingAge))
        }
        await sample(.consumerLag, within: timeout) { [configuration, metrics] in
            var lags: [KafkaPartitionLag] = []
            for topic in configuration.consumer.topics {
                lags += try await admin.consumerLag(
                    group: configuration.consumer.groupID,
                    topic: topic,
                    timeout: timeout
                )
            }
            metrics.setLag(lags)
        }
        let bodiesSampled = lastSuccess.withLock { $0[.bodies] }
        if bodiesSampled.map({ $0.duration(to: .now) >= Self.bodiesSampleInterval }) ?? true {
            await sample(.bodies, within: timeout) { [store, metrics] in
                let partitions = try await store.bodyPartitions()
                metrics.oldestBody.set(partitions.first?.start.timeIntervalSince1970 ?? 0)
                metrics.bodyMonthsAhead.set(Double(NotificationStore.monthsAhead(in: partitions)))
            }
        }
    }

    /// Gives the heap's free memory back to the system (glibc's `malloc_trim`). glibc keeps what a burst freed for
    /// later allocations: after a flood of 190 KB bodies a worker held 130 MB it no longer used, which a pod's memory
    /// limit counts. Trimming once a sample interval costs a walk of the free lists, microseconds when little is free.
    static func returnFreedMemory() {
        #if canImport(Glibc)
        _ = mallocTrim?(0)
        #endif
    }

    #if canImport(Glibc)
    /// `malloc_trim` of the C library, looked up once: `<malloc.h>` is not in Swift's Glibc module (nil with
    /// another C library).
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
    #endif

    /// Runs `body` and waits for it at most `timeout`: a late one goes on in the background (bounded by its own
    /// timeouts) and does not count as a success.
    private func sample(
        _ sample: WorkerMetrics.Sample,
        within timeout: Duration,
        _ body: @escaping @Sendable () async throws -> Void
    ) async {
        let logger = logger
        let succeeded = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let outcome = FirstOutcome(continuation)
            let work = Task {
                do {
                    try await body()
                    outcome.resume(true)
                } catch {
                    logger.debug("A metrics sample failed", metadata: ["sample": "\(sample)", "error": "\(error)"])
                    outcome.resume(false)
                }
            }
            Task {
                try? await Task.sleep(for: timeout)
                if outcome.resume(false) {
                    logger.debug(
                        "A metrics sample timed out",
                        metadata: ["sample": "\(sample)", "timeout": "\(timeout)"]
                    )
                    work.cancel()
                }
            }
        }
        if succeeded { lastSuccess.withLock { $0[sample] = .now } }
    }
}

/// Resumes a continuation with whichever outcome comes first.
private final class FirstOutcome: Sendable {
    private let continuation: Mutex<CheckedContinuation<Bool, Never>?>

    init(_ continuation: CheckedContinuation<Bool, Never>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes with `value` unless already resumed; returns whether it did.
    @discardableResult
    func resume(_ value: Bool) -> Bool {
        guard let continuation = continuation.withLock({ $0.take() }) else { return false }
        continuation.resume(returning: value)
        return true
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
