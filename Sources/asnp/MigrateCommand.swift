import ArgumentParser
import CommandSupport
import Foundation
import Logging
import NotificationSchema
import NotificationStore
import PipelineServices
import PostgresRuntime

/// `asnp migrate`: brings the database schema to the version this program needs.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the database schema migrations this program carries.",
        discussion: """
            Applies, in one transaction, every migration the database has not recorded yet (table \
            asnp_schema_migrations), holding an advisory lock so that several processes can run it at once. \
            Running it again changes nothing. With --check it changes nothing and fails unless the schema is \
            current: a readiness check for workers that do not migrate by themselves.

            Then it moves what notifications stored before schema 6 keep in their row (raw body, decoded JSON) to \
            notification_bodies, packed, 500 rows a transaction, while the workers go on writing; interrupted, it \
            resumes where it stopped when run again. --skip-moving-bodies leaves that for a later run.

            The database is --database-url (or DATABASE_URL) when given; otherwise the settings the services \
            read: --config, the environment and secret files (database.url or database.urlFile, the TLS settings \
            database.sslMode, sslRootCert, sslCert, sslKey, database.timeoutSeconds).

            Exit status: 0 the schema is current, 3 the database could not be migrated or (with --check) is not \
            current.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "A JSON configuration file (see Config/), read when --database-url and DATABASE_URL are not given.")
    var config: String?

    @Flag(help: "Only check that the schema is current; apply nothing.")
    var check = false

    @Flag(help: "Apply the schema only; leave the bodies of notifications stored before schema 6 in their rows.")
    var skipMovingBodies = false

    @Option(
        help: """
            With --check: wait up to this many seconds for the schema to become current (another process migrating \
            it), checking every 2 s; for an init container that holds a new version's pods until the migration ran.
            """
    )
    var wait: Int?

    @Option(help: "Log level on standard error: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        if let wait {
            guard check else { throw ValidationError("--wait goes with --check") }
            guard wait > 0 else { throw ValidationError("--wait must be a positive number of seconds") }
        }
    }

    func run() async throws {
        let config = self.config
        let configuration = try await database.configuration(configFile: config) {
            try await PipelineSettings.load(file: config)
        }
        var logger = Logger(label: "asnp.migrate", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = logLevel
        let check = self.check
        let movesBodies = !skipMovingBodies
        let deadline = wait.map { ContinuousClock.now.advanced(by: .seconds($0)) }
        do {
            let message = try await NotificationStore.withRunning(configuration: configuration, logger: logger) {
                store in
                if check {
                    while true {
                        do {
                            try await store.checkSchema()
                            break
                        } catch {
                            guard let deadline, ContinuousClock.now.advanced(by: .seconds(2)) < deadline else {
                                throw error
                            }
                            logger.info("Schema not current yet; checking again", metadata: ["error": "\(error)"])
                            try await Task.sleep(for: .seconds(2))
                        }
                    }
                    return "schema current at version \(SchemaMigration.latestVersion)"
                }
                let report = try await store.migrate()
                let applied =
                    report.applied.isEmpty
                    ? "nothing to apply"
                    : "applied " + report.applied.map { "\($0.version) (\($0.name))" }.joined(separator: ", ")
                guard movesBodies else { return "schema at version \(report.version): \(applied)" }
                let moved = try await store.moveBodies { [logger] moved in
                    logger.info("Moving bodies to notification_bodies", metadata: ["moved": "\(moved)"])
                }
                let bodies = moved == 0 ? "" : "; moved \(moved) bodies to notification_bodies"
                return "schema at version \(report.version): \(applied)\(bodies)"
            }
            print("\(configuration.redactedURL): \(message)")
        } catch {
            FileHandle.standardError.write(Data("asnp migrate: \(configuration.redactedURL): \(error)\n".utf8))
            logger.debug("migration failure detail", metadata: ["error": "\(String(reflecting: error))"])
            throw CLIExit.failed
        }
    }
}
