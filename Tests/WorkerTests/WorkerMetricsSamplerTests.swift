import AppStoreTestSupport
import Foundation
import KafkaClient
import NotificationStore
import PostgresRuntime
import Prometheus
import StoreTestSupport
import Testing
import Worker

@Suite("Worker metrics sampled in the background: scrapes never wait on PostgreSQL or Kafka", .tags(.pipeline))
struct WorkerMetricsSamplerTests {
    /// The registry's lines after setting the samples' ages, as a scrape gives them.
    static func scrape(_ sampler: WorkerMetricsSampler, _ metrics: WorkerMetrics) -> [Substring] {
        sampler.recordAges()
        var bytes: [UInt8] = []
        metrics.registry.emit(into: &bytes)
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n")
    }

    static func value(_ lines: [Substring], _ prefix: String) -> Double? {
        lines.first { $0.hasPrefix(prefix) }?.split(separator: " ").last.flatMap { Double($0) }
    }

    @Test(
        """
        With no worker consuming, the group's lag shows for every partition; with PostgreSQL stopped, a scrape \
        still answers with the last outbox count and the age of that sample grows
        """
    )
    func lagOfEveryPartitionAndStaleSamples() async throws {
        let server = try await TestPostgresServer.start()
        defer { Task { try? await server.stop() } }
        try await WorkerTestRig.run(
            partitions: 4,
            server: server,
            configure: {
                $0.operationTimeout = .seconds(1)
                $0.connectTimeout = .seconds(1)
            }
        ) { rig, _ in
            // Nothing consumes: every worker is down, say.
            let bodies = try WorkerPipelineTests.scenarioLines().prefix(10).map(\.body)
            _ = await rig.producer.send(contentsOf: bodies.map { WorkerPipelineTests.rawMessage($0) })
            var configuration = WorkerPipelineTests.workerConfiguration(rig.mock)
            configuration.metricsSampleInterval = .milliseconds(200)
            let metrics = WorkerMetrics()
            let sampler = WorkerMetricsSampler(
                configuration: configuration,
                store: rig.store,
                metrics: metrics,
                logger: rig.logger
            )
            let sampling = Task { try await sampler.run() }
            defer { sampling.cancel() }

            var lagLines: [Substring] = []
            _ = await eventually {
                lagLines = Self.scrape(sampler, metrics).filter { $0.hasPrefix("asnp_worker_consumer_lag_messages{") }
                return lagLines.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +) == 10
            }
            #expect(lagLines.count == 4, "every partition of the raw topic, owned by nobody: \(lagLines)")
            let lag: Double = lagLines.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
            #expect(lag == 10)
            // The outbox sample succeeded too (on a loaded machine the first connection may take a while).
            let outboxAge = #"asnp_worker_metrics_sample_age_seconds{sample="outbox"}"#
            var sampled: [Substring] = []
            _ = await eventually {
                sampled = Self.scrape(sampler, metrics)
                return (Self.value(sampled, outboxAge) ?? -1) >= 0
            }
            #expect((Self.value(sampled, outboxAge) ?? -1) >= 0)
            #expect(Self.value(sampled, "asnp_worker_outbox_rows ") == 0)
            // The oldest month of bodies kept: the migration made this UTC month's partition (and the next).
            let bodiesAge = #"asnp_worker_metrics_sample_age_seconds{sample="bodies"}"#
            _ = await eventually {
                sampled = Self.scrape(sampler, metrics)
                return (Self.value(sampled, bodiesAge) ?? -1) >= 0
            }
            let oldest = Self.value(sampled, "asnp_store_oldest_body_timestamp_seconds ") ?? 0
            let now = Date().timeIntervalSince1970
            #expect(oldest > 0 && oldest <= now && now - oldest < 32 * 86_400, "this month's start: \(oldest)")

            // PostgreSQL goes away: scrapes go on answering, with the last count and a growing age, while the lag
            // (Kafka is still there) goes on being sampled.
            try await server.stop()
            let lagAge = #"asnp_worker_metrics_sample_age_seconds{sample="consumer_lag"}"#
            var stale: [Substring] = []
            _ = await eventually {
                stale = Self.scrape(sampler, metrics)
                return (Self.value(stale, outboxAge) ?? 0) >= 3
                    && (Self.value(stale, lagAge) ?? 99) < (Self.value(stale, outboxAge) ?? 0)
            }
            #expect((Self.value(stale, outboxAge) ?? 0) >= 3, "no outbox sample since PostgreSQL stopped")
            #expect((Self.value(stale, lagAge) ?? 99) < (Self.value(stale, outboxAge) ?? 0), "lag sampled since")
            #expect(Self.value(stale, "asnp_worker_outbox_rows ") == 0, "the last value is kept")
            try await server.restart()
        }
    }
}
