import ArgumentParser
import Foundation
import Logging
import PipelineServices

/// `asnp ingress`: the HTTP receiver Apple posts to.
struct IngressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingress",
        abstract: "Receive App Store Server Notifications over HTTP and put them on the raw Kafka topic.",
        discussion: """
            Settings come from the environment and, with --config, a JSON file (the environment wins); \
            Config/README.md lists them. Required: kafka.bootstrapServers (KAFKA_BOOTSTRAP_SERVERS), apps.names \
            (APPS_NAMES) and apps.{name}.bundleId. Answers 200 only after the broker acknowledged the body; 503 \
            otherwise, so Apple retries. The notification routes are all ingress.port (8080) serves; /health/live, \
            /health/ready and /metrics answer on ingress.statusHost:ingress.statusPort (0.0.0.0:9090). SIGTERM or \
            SIGINT: stop accepting, finish the requests in progress, flush, exit 0.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        var logger = Logger(label: "asnp.ingress")
        logger.logLevel = logLevel
        let settings = try await PipelineSettings.load(file: config).ingressRole()
        let role = try buildIngress(settings, logger: logger)
        try await role.run(logger: logger)
        logger.info("Ingress stopped")
    }
}
