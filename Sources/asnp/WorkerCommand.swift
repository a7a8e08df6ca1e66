import ArgumentParser
import Logging
import PipelineServices

/// `asnp worker`: a member of the worker consumer group.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Verify raw notifications from Kafka and store them in PostgreSQL; run one per container.",
        discussion: """
            Settings come from the environment and, with --config, a JSON file (the environment wins); \
            Config/README.md lists them. Required: kafka.bootstrapServers, apps.names and apps.{name}.bundleId, \
            database.url (DATABASE_URL). Offsets are committed only after a batch's transaction committed; a batch \
            that cannot be stored is retried, never skipped. Add workers to scale: partitions are shared in the \
            consumer group. SIGTERM or SIGINT: finish the batch in hand, leave the group, exit 0.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Flag(help: "Apply missing schema migrations before consuming (otherwise the schema must be current).")
    var migrate = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        var logger = Logger(label: "asnp.worker")
        logger.logLevel = logLevel
        let settings = try await PipelineSettings.load(file: config).workerRole()
        let role = try buildWorker(settings, migrate: migrate, logger: logger)
        try await role.run(logger: logger)
        logger.info("Worker stopped")
    }
}
