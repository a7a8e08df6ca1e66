import ArgumentParser
import CommandSupport
import Foundation
import KafkaClient
import Logging
import NotificationStore
import PipelineServices
import Worker

/// `asnp status`: what the pipeline holds and how far the workers are behind.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Show stored notifications, subscriptions by state, rejections, the workers' lag and the reconciler's ledger.",
        discussion: """
            Reads PostgreSQL (database.url) and, when kafka.bootstrapServers is set, the worker group's lag on the \
            raw topic. The counts read whole tables: an operator's look, not a dashboard (use the metrics). Exit 3 \
            if the database cannot be read.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    struct Report: Encodable {
        var counts: PipelineCounts
        var kafka: KafkaStatus?
        /// The reconciler's ledgers and the failed deliveries Apple reported; nil when they could not be read.
        var history: HistoryLedgerReport?
        /// Why not (a schema before version 7: run asnp migrate).
        var historyError: String?
    }

    struct KafkaStatus: Encodable {
        var group: String
        var topic: String
        var lag: Int64?
        var lagByPartition: [String: Int64]?
        var error: String?
    }

    func run() async throws {
        var logger = Logger(label: "asnp.status")
        logger.logLevel = .error
        let settings = try await PipelineSettings.load(file: config)
        let database = try settings.database()
        var report = try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
            var report = Report(counts: try await store.counts())
            // The counts are the command's point; the ledgers are reported as unreadable rather than failing it.
            do {
                report.history = try await HistoryLedgerReport.read(from: store)
            } catch {
                report.historyError = "\(error)"
            }
            return report
        }
        report.kafka = await kafkaStatus(settings: settings, logger: logger)
        if json {
            TextColumns.printJSON(report)
        } else {
            print(Self.text(report))
        }
    }

    /// The worker group's lag, nil when no Kafka is configured; a failure to read it is reported, not thrown.
    private func kafkaStatus(settings: PipelineSettings, logger: Logger) async -> KafkaStatus? {
        guard let cluster = try? settings.kafkaCluster(clientID: "asnp-status"),
            let worker = try? settings.worker(cluster: cluster)
        else { return nil }
        var status = KafkaStatus(group: worker.consumer.groupID, topic: worker.consumer.topics[0])
        do {
            let admin = try KafkaAdminClient(cluster: cluster, logger: logger)
            let lags = try await admin.consumerLag(group: status.group, topic: status.topic, timeout: .seconds(10))
            status.lag = lags.map(\.lag).reduce(0, +)
            status.lagByPartition = Dictionary(
                uniqueKeysWithValues: lags.map { (String($0.topicPartition.partition), $0.lag) }
            )
        } catch {
            status.error = "\(error)"
        }
        return status
    }

    static func text(_ report: Report) -> String {
        let counts = report.counts
        func breakdown(_ values: [String: Int]) -> String {
            guard !values.isEmpty else { return "-" }
            return values.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }
                .joined(separator: ", ")
        }
        var lines = [
            "notifications   \(counts.notifications)"
                + (counts.lastReceivedAt.map { ", last received \(SubscriptionShowCommand.time($0))" } ?? ""),
            "  by type       \(breakdown(counts.notificationsByType))",
            "subscriptions   \(counts.subscriptions)",
            "  by latest     \(breakdown(counts.subscriptionsByLastType))",
            "rejected        \(counts.rejected) (\(counts.rejectedNotReplayed) not replayed)",
            "  by status     \(breakdown(counts.rejectedByStatus))",
            "outbox          \(counts.outboxRows) event(s) waiting to be published",
        ]
        if let kafka = report.kafka {
            if let lag = kafka.lag {
                let partitions = (kafka.lagByPartition ?? [:]).filter { $0.value > 0 }
                    .sorted { Int($0.key) ?? 0 < Int($1.key) ?? 0 }.map { "\($0.key): \($0.value)" }
                lines.append(
                    "kafka lag       \(lag) on \(kafka.topic) for group \(kafka.group)"
                        + (partitions.isEmpty ? "" : " (partition \(partitions.joined(separator: ", ")))")
                )
            } else {
                lines.append("kafka lag       unknown: \(kafka.error ?? "no answer")")
            }
        }
        if let history = report.history {
            lines += history.lines(detailed: false)
        } else {
            lines.append("history         unreadable: \(report.historyError ?? "unknown error")")
        }
        return lines.joined(separator: "\n")
    }
}
