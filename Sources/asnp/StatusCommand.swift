import ArgumentParser
import CommandSupport
import Foundation
import KafkaClient
import Logging
import NotificationStore
import PipelineReports
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

    func run() async throws {
        var logger = Logger(label: "asnp.status")
        logger.logLevel = .error
        let settings = try await PipelineSettings.load(file: config)
        let database = try settings.database()
        var report = try await NotificationStore.withRunning(configuration: database, logger: logger) {
            try await StatusReport.read(from: $0)
        }
        if let cluster = try? settings.kafkaCluster(clientID: "asnp-status"),
            let worker = try? settings.worker(cluster: cluster)
        {
            report.kafka = await StatusReport.KafkaStatus.read(
                cluster: cluster,
                group: worker.consumer.groupID,
                topic: worker.consumer.topics[0],
                logger: logger
            )
        }
        if json {
            TextColumns.printJSON(report)
        } else {
            print(report.text)
        }
    }
}
