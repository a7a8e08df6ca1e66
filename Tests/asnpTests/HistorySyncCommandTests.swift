import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import ChildProcesses
import CommandSupport
import Foundation
import HistoryTestSupport
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing

@testable import asnp

@Suite("asnp history sync: Apple's history through the raw topic to the workers", .tags(.process))
struct HistorySyncCommandTests {
    static let topic = PipelineTopics.raw

    @Test(
        """
        Notifications missing from the database are there after the sync, none twice; a sync without --until of \
        every app and environment, stopped by SIGTERM or killed with SIGKILL part-way, resumes at its saved page \
        when run again, and the ledger covers every app and environment
        """
    )
    func endToEnd() async throws {
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let events = SubscriptionEvent.samples(count: 1_000, bundleId: Fixtures.bundleId)
        let history = try events.map { try signer.signer.sign(try signer.payload(for: $0)) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-history-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = directory.appendingPathComponent("root.der")
        try Data(try pki.rootDER()).write(to: root)

        let mock = try await KafkaMockChild.start(
            executable: ASNPProcess.executable,
            arguments: ["--topic", "\(Self.topic):4"]
        )
        defer { mock.stop() }
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let databaseURL = server.url(database: database.database)
        let worker = try await InProcessWorker.start(
            bootstrapServers: mock.bootstrapServers,
            databaseURL: databaseURL,
            appAppleID: nil,
            rootCertificate: root.path
        )
        defer { worker.cancel() }

        // The ingress got the first 300; the other 700 never arrived.
        let delivered = try history.prefix(300).map { try NotificationSigner.envelope($0) }
        try await WorkerProcess.produce(delivered, bootstrapServers: mock.bootstrapServers, topic: Self.topic)
        let count = "SELECT count(*) FROM notifications"
        #expect(try await ReplayCommandTests.wait(server, database.database, count, "300", worker: worker))

        // A second app with a short history of its own; the worker knows only the first, and rejects its bodies.
        let games = try SubscriptionEvent.samples(count: 30, bundleId: "com.example.games").map {
            try signer.signer.sign(try signer.payload(for: $0))
        }
        let spread = FakeAppStoreServer.twentyDaysToYesterday
        let items = { (payloads: [String]) in
            payloads.enumerated().map { index, payload in
                FakeAppStoreServer.Item(
                    signedPayload: payload,
                    sentAt: spread.lowerBound.addingTimeInterval(Double(index) * 20 * 86_400 / Double(payloads.count))
                )
            }
        }
        let apple = FakeAppStoreServer(sandbox: [Fixtures.bundleId: items(history), "com.example.games": items(games)])
        try await apple.serve { baseURL in
            var environment = ProcessInfo.processInfo.environment
            environment["KAFKA_BOOTSTRAP_SERVERS"] = mock.bootstrapServers
            environment["DATABASE_URL"] = databaseURL
            environment["APPS_NAMES"] = "notes,games"
            environment["APPS_NOTES_BUNDLE_ID"] = Fixtures.bundleId
            environment["APPS_GAMES_BUNDLE_ID"] = "com.example.games"
            for app in ["NOTES", "GAMES"] {
                environment["APPS_\(app)_API_KEY_ID"] = apple.keyID
                environment["APPS_\(app)_API_ISSUER_ID"] = apple.issuerID
                environment["APPS_\(app)_API_PRIVATE_KEY"] = apple.privateKeyPEM
            }
            environment["HISTORY_SANDBOX_URL"] = baseURL + "/sandbox"
            environment["HISTORY_PRODUCTION_URL"] = baseURL + "/production"
            environment["HISTORY_REQUESTS_PER_SECOND"] = "20"
            // From the start of the history, up to now: every app, both environments.
            let arguments = ["history", "sync", "--since", spread.lowerBound.formatted(.iso8601)]

            // Stopped by SIGTERM after the notes' second sandbox page (production, first, has none): it says so
            // and exits 0.
            let stopped = try Self.start(arguments, environment: environment)
            _ = await stopped.error.read(until: "Sandbox: page 2,")
            stopped.process.terminate()
            let stoppedSummary = await stopped.output.read(until: "run again to resume")
            await stopped.process.exited()
            #expect(stopped.process.terminationStatus == 0)
            #expect(stoppedSummary.contains("stopped; run again to resume"), "\(stoppedSummary)")

            // Killed without warning after its tenth page.
            let killed = try Self.start(arguments, environment: environment)
            _ = await killed.error.read(until: "Sandbox: page 10,")
            killed.process.terminate(SIGKILL)
            await killed.process.exited()
            let pagesBefore = apple.log.requests
            #expect(pagesBefore >= 10 && pagesBefore < 60, "\(pagesBefore) requests before the kill")

            // The kill may land just as a day's range was covered, with the next not begun: then nothing resumes.
            let saved = try await server.psql(
                database.database,
                "SELECT count(*) FROM history_ledger WHERE pagination_token IS NOT NULL"
            )
            let rerun = try Self.start(arguments, environment: environment)
            await rerun.process.exited()
            let summary = String(decoding: await rerun.output.readToEnd(), as: UTF8.self)
            #expect(rerun.process.terminationStatus == 0)
            let lines = summary.split(separator: "\n")
            #expect(lines.count == 4, "a summary for each app and environment: \(summary)")
            #expect(lines.allSatisfy { $0.contains(": covered;") || $0.contains(": already covered;") }, "\(summary)")
            let log = apple.log
            let firstSandbox = try #require(
                log.environments.indices.first { $0 >= pagesBefore && log.environments[$0] == "Sandbox" }
            )
            if saved == "1" {
                #expect(
                    lines.contains { $0.contains("\(Fixtures.bundleId) Sandbox") && $0.contains("1 ranges resumed") }
                )
                #expect(log.paginationTokens[firstSandbox] != nil, "the rerun resumed at the saved page")
            } else {
                #expect(saved == "0", "at most one range in progress: \(saved)")
            }
            #expect(log.invalidTokens == 0)

            // The ledgers, as an operator reads them.
            let status = try await ASNPProcess.run(["history", "status"], environment: environment)
            #expect(status.status == 0, "\(status.standardError)")
            #expect(status.standardOutput.contains("history         \(Fixtures.bundleId) Sandbox: settled until "))
            #expect(status.standardOutput.contains("history         com.example.games Production: settled until "))
            let overall = try await ASNPProcess.run(["status", "--json"], environment: environment)
            let report = try JSONSerialization.jsonObject(with: Data(overall.standardOutput.utf8)) as? [String: Any]
            let ledgers = (report?["history"] as? [String: Any])?["ledgers"] as? [[String: Any]]
            #expect(ledgers?.count == 4, "asnp status --json carries the ledgers: \(overall.standardOutput)")
        }
        let ledgers = try await server.psql(
            database.database,
            "SELECT bundle_id || ' ' || environment || ' ' || string_agg(state, ',') FROM history_ledger GROUP BY bundle_id, environment ORDER BY 1"
        )
        #expect(
            ledgers.split(separator: "\n")
                == [
                    "com.example.games Production covered", "com.example.games Sandbox covered",
                    "\(Fixtures.bundleId) Production covered", "\(Fixtures.bundleId) Sandbox covered",
                ].sorted().map { Substring($0) },
            "\(ledgers)"
        )

        #expect(try await ReplayCommandTests.wait(server, database.database, count, "1000", worker: worker))
        let uuids = try await server.psql(database.database, "SELECT notification_uuid FROM notifications")
        #expect(Set(uuids.split(separator: "\n").map(String.init)) == Set(events.map(\.notificationUUID)))
        try await worker.stop()
    }

    @Test("a missing API key setting stops with an error naming the key and its variable; Apple's filters are checked")
    func settingsErrors() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["KAFKA_BOOTSTRAP_SERVERS"] = "127.0.0.1:9"
        environment["DATABASE_URL"] = "postgres://postgres@127.0.0.1:9/asnp"
        environment["APPS_NAMES"] = "notes"
        environment["APPS_NOTES_BUNDLE_ID"] = Fixtures.bundleId
        let arguments = ["history", "sync", "--environment", "sandbox", "--since", "2026-01-01T00:00:00Z"]
        let missing = try Self.start(arguments, environment: environment)
        let message = await missing.error.read(until: "\n")
        await missing.process.exited()
        #expect(missing.process.terminationStatus == 2)
        #expect(message.contains("apps.notes.api.keyId (environment APPS_NOTES_API_KEY_ID) is required"), "\(message)")

        let both = try Self.start(
            arguments + ["--type", "DID_RENEW", "--transaction-id", "1"],
            environment: environment
        )
        let usage = await both.error.read(until: "\n")
        await both.process.exited()
        #expect(both.process.terminationStatus == 2)
        #expect(usage.contains("not both"), "\(usage)")
    }

    /// Starts `asnp` with its standard output and error on pipes.
    static func start(_ arguments: [String], environment: [String: String]) throws -> (
        process: ChildProcess, output: OutputPipe, error: OutputPipe
    ) {
        let output = try OutputPipe()
        let error = try OutputPipe()
        let process = try ChildProcess(
            executable: ASNPProcess.executable.path,
            arguments: arguments,
            environment: environment,
            standardOutput: .pipe(output),
            standardError: .pipe(error)
        )
        return (process, output, error)
    }
}
