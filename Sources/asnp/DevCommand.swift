// `asnp dev` is a development tool: built with the DevelopmentTools trait (the default), left out of the image.
#if DevelopmentTools
import AppStoreSigning
import ArgumentParser
import Foundation
import Ingress
import KafkaClient
import LocalPostgres
import Logging
import NotificationStore
import PipelineContract
import PipelineServices
import PipelineTracing
import PostgresRuntime
import ServiceLifecycle
import UnixSignals
import Worker
import X509

/// `asnp dev`: the whole pipeline on one machine, with no external services.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run the whole pipeline here: an in-process Kafka mock, a local PostgreSQL, the ingress and workers.",
        discussion: """
            Starts librdkafka's mock cluster in this process (raw, decoded, state and dead-letter topics), a \
            PostgreSQL server in --data-dir (created on first use with Debian's initdb, run as the postgres user \
            when started as root; or --database-url / DATABASE_URL), applies the migrations, then the ingress on \
            127.0.0.1:--http-port and --workers workers. Prints what it started, then a line `ready`. SIGINT or \
            SIGTERM stops everything; the data directory is kept for the next run. The mock cluster keeps about \
            5 MB per partition and nothing across runs: this is for development, never production.
            """
    )

    @Option(help: "Where the local PostgreSQL keeps its data, kept between runs.")
    var dataDir = ".asnp"

    @Option(help: "Use this PostgreSQL (libpq-style URL) instead of starting one. Default: $DATABASE_URL, if set.")
    var databaseURL: String?

    @Option(help: "The port of the local PostgreSQL, on 127.0.0.1.")
    var postgresPort = 55_433

    @Option(help: "The ingress's port, on 127.0.0.1.")
    var httpPort = 8080

    @Option(help: "The read API's port, on 127.0.0.1; 0: no read API. A new key is made each run and printed.")
    var apiPort = 8081

    @Option(help: "How many workers to run.")
    var workers = 2

    @Option(help: "Partitions of each topic in the mock cluster.")
    var partitions = 8

    @Option(help: "The app's name in routes and headers.")
    var appName = "notes"

    @Option(help: "The app's bundle identifier.")
    var bundleId = "com.example.notes"

    @Option(help: "The app's Apple identifier (Production notifications need it).")
    var appAppleId: Int64?

    @Option(name: .customLong("shared-secret"), help: "A V1 shared secret; repeatable.")
    var sharedSecrets: [String] = []

    @Option(
        name: .customLong("root-cert"),
        help: "A trusted root certificate (DER or PEM); repeatable. Default: Apple Root CA - G3."
    )
    var rootCertificatePaths: [String] = []

    @Flag(
        help: """
            Sign realistic notifications with a fresh test PKI (trusted for this run), post them through the ingress \
            with duplicate retries and one tampered body, and print what the pipeline made of them.
            """
    )
    var demo = false

    @Option(help: "With --demo: how many notifications (six per subscription).")
    var demoCount = 300

    @Option(
        help: """
            Export the spans of every request and batch to this OTLP/HTTP traces URL (an OpenTelemetry collector's, \
            e.g. http://localhost:4318/v1/traces).
            """
    )
    var tracingEndpoint: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        guard workers > 0, partitions > 0 else { throw ValidationError("--workers and --partitions must be positive") }
        guard demoCount > 0 else { throw ValidationError("--demo-count must be positive") }
        if let tracingEndpoint {
            guard let url = URL(string: tracingEndpoint), ["http", "https"].contains(url.scheme), url.host != nil else {
                throw ValidationError("--tracing-endpoint must be an http or https URL, not '\(tracingEndpoint)'")
            }
        }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.dev")
        logger.logLevel = logLevel
        var roots = try RootCertificateFile.trustedRoots(paths: rootCertificatePaths)
        var demoBodies: [String] = []
        if demo {
            FileHandle.standardError.write(Data("signing \(demoCount) demo notifications...\n".utf8))
            let pki = try TestPKI()
            roots.append(pki.root)
            let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
            demoBodies = try SubscriptionEvent.samples(count: demoCount, bundleId: bundleId).map {
                try signer.body(for: $0)
            }
        }
        let (database, localServer) = try await startDatabase()
        do {
            try await runPipeline(
                database: database,
                roots: roots,
                localServer: localServer,
                demoBodies: demoBodies,
                logger: logger
            )
        } catch {
            await Self.stop(localServer)
            throw error
        }
        await Self.stop(localServer)
    }

    /// The database to use: the one named, or a local server in the data directory (started, with database `asnp`).
    private func startDatabase() async throws -> (NotificationStoreConfiguration, LocalPostgresServer?) {
        if let url = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"] {
            do {
                return (try NotificationStoreConfiguration(url: url), nil)
            } catch {
                throw ValidationError(error.description)
            }
        }
        let directory = URL(fileURLWithPath: dataDir).appendingPathComponent("postgres").standardizedFileURL.path
        let server = LocalPostgresServer(directory: directory, port: postgresPort)
        try await LocalPostgresServer.offPool {
            // A server left running by a run that did not stop cleanly.
            if server.isInitialized, server.isRunning { try server.stop() }
            try server.initialize()
            try server.start(durable: true)
            try server.createDatabaseIfMissing("asnp")
        }
        var configuration = NotificationStoreConfiguration(
            endpoint: .tcp(host: "127.0.0.1", port: postgresPort),
            username: "postgres",
            database: "asnp",
            tls: .disable
        )
        configuration.applicationName = "asnp-dev"
        return (configuration, server)
    }

    private func runPipeline(
        database: NotificationStoreConfiguration,
        roots: [Certificate],
        localServer: LocalPostgresServer?,
        demoBodies: [String],
        logger: Logger
    ) async throws {
        var configuration = DevStackConfiguration(
            app: PipelineApp(name: appName, bundleID: bundleId, appAppleID: appAppleId, sharedSecrets: sharedSecrets),
            database: database,
            trustedRoots: roots
        )
        configuration.httpPort = httpPort
        configuration.workers = workers
        configuration.partitions = partitions
        if let tracingEndpoint {
            // Every request and batch: a machine of one's own sends few.
            var tracing = TracingConfiguration(serviceName: "asnp-dev")
            tracing.isEnabled = true
            tracing.endpoint = tracingEndpoint
            tracing.samplingRatio = 1
            configuration.tracing = tracing
        }
        let (listening, listened) = AsyncStream.makeStream(of: Int.self)
        let stack = try await buildDevStack(configuration, logger: logger) { port in
            listened.yield(port)
            listened.finish()
        }
        let (mock, outputs, rawTopic, migration) =
            (stack.mock, stack.outputTopics, stack.ingressConfiguration.rawTopic, stack.migration)
        let summary = [
            "asnp dev",
            "  ingress   http://127.0.0.1:\(httpPort)/v2/notifications/sandbox (and /v1/, /production), "
                + "app \(appName) (\(bundleId))",
            "  kafka     in-process mock at \(mock.bootstrapServers), topics \(rawTopic), "
                + "\(outputs.decoded), \(outputs.subscriptionState), \(outputs.deadLetter) (\(partitions) partitions)",
            "  database  \(database.redactedURL)"
                + (localServer.map { " (data in \($0.directory))" } ?? "")
                + ", schema version \(migration.version)"
                + (migration.applied.isEmpty ? " (nothing to apply)" : " (applied \(migration.applied.count))"),
            "  workers   \(workers)",
        ].joined(separator: "\n")
        // A settings file for `asnp status` and `asnp subscription show` against this run.
        let configPath = URL(fileURLWithPath: dataDir).appendingPathComponent("dev.json").standardizedFileURL.path
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let api = try readAPI(database: database, tracing: configuration.tracing, logger: logger)
        // A database password is not written to disk: such a database is named by the caller anyway.
        let databaseSetting = database.password == nil ? #""database": {"url": "\#(database.redactedURL)"}, "# : ""
        let settings = #"{\#(databaseSetting)"kafka": {"bootstrapServers": "\#(mock.bootstrapServers)"}}"#
        try Data(settings.utf8).write(to: URL(fileURLWithPath: configPath))
        // Announced once the ingress listens: the summary, then `ready`, written at once (not through print's
        // buffer), so a script waiting for `ready` sees it; the demo starts posting then.
        let (demoStart, demoStarted) = AsyncStream.makeStream(of: Void.self)
        let apiLine =
            api.map { "\n  api       \($0.url)/v1/subscriptions/{id}?environment=Sandbox, key \($0.key)" } ?? ""
        let announcement = Announcement(listening: [listening] + (api.map { [$0.listening] } ?? [])) {
            FileHandle.standardOutput.write(
                Data((summary + apiLine + "\n  settings  \(configPath)\nready\n").utf8)
            )
            demoStarted.yield()
            demoStarted.finish()
        }
        var services = stack.services + (api?.role.services ?? []) + [.init(service: announcement)]
        if !demoBodies.isEmpty {
            let demo = DevDemo(
                bodies: demoBodies,
                ingressURL: "http://127.0.0.1:\(httpPort)/v2/notifications/sandbox",
                api: api.map { ($0.url, $0.key) },
                store: stack.store,
                listening: demoStart,
                configPath: configPath
            )
            services.append(.init(service: demo))
        }
        // Started in order and stopped in reverse: the demo and the ingress stop first, then the workers, the
        // producers (flushing) and the store.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }

    /// The read API on `--api-port` (nil with 0), with a key made now (its hash in the data directory).
    private func readAPI(
        database: NotificationStoreConfiguration,
        tracing: TracingConfiguration?,
        logger: Logger
    ) throws -> (role: APIRole, url: String, key: String, listening: AsyncStream<Int>)? {
        guard apiPort != 0 else { return nil }
        let (listening, listened) = AsyncStream.makeStream(of: Int.self)
        let (role, key) = try buildDevelopmentAPI(
            database: database,
            bundleId: bundleId,
            port: apiPort,
            keysFile: URL(fileURLWithPath: dataDir).appendingPathComponent("api-keys.json").standardizedFileURL.path,
            tracing: tracing,
            logger: logger
        ) { port in
            listened.yield(port)
            listened.finish()
        }
        return (role, "http://127.0.0.1:\(apiPort)", key, listening)
    }

    private static func stop(_ server: LocalPostgresServer?) async {
        guard let server else { return }
        try? await LocalPostgresServer.offPool { try server.stop() }
    }
}

/// Calls `announce` once the ingress (and the read API) listen, then waits for the group to stop.
private struct Announcement: Service {
    let listening: [AsyncStream<Int>]
    let announce: @Sendable () -> Void

    func run() async throws {
        for stream in listening {
            for await _ in stream { break }
        }
        announce()
        try? await gracefulShutdown()
    }
}
#endif
