import ArgumentParser
import Logging
import PipelineServices

/// `asnp api serve` (or `asnp api`): the read API's role.
struct APIServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the read API (the default of `asnp api`).",
        discussion: """
            Settings come from the environment and, with --config, a JSON file (the environment wins); \
            Config/README.md lists them. Required: api.keysFile (API_KEYS_FILE), the JSON file of the keys' hashes \
            and scopes (`asnp api key new` makes entries), and database.url (DATABASE_URL) or api.database.url \
            (API_DATABASE_URL, a replica or a PgBouncer will do: the API only reads). The API listens on api.port \
            (8081); /health/live, /health/ready and /metrics answer on api.statusHost:api.statusPort \
            (0.0.0.0:9090). Docs/api.md is the guide for app backends. SIGTERM or SIGINT: finish the requests in \
            progress, exit 0.
            """
    )

    @Option(help: "A JSON configuration file (see Config/).")
    var config: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        var logger = Logger(label: "asnp.api")
        logger.logLevel = logLevel
        let settings = try await PipelineSettings.load(file: config).apiRole()
        let role = try buildAPI(settings, logger: logger)
        try await role.run(logger: logger)
        logger.info("Read API stopped")
    }
}
