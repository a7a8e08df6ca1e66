import AppStoreModels
import AppStoreTestSupport
import CommandSupport
import Foundation
import KafkaClient
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing

@testable import asnp

@Suite("asnp replay: rejected notifications and raw-topic offsets back to the workers", .tags(.process))
struct ReplayCommandTests {
    static let topic = PipelineTopics.raw

    @Test(
        "Rejected for an unknown app, then the app is configured: replay rejected stores them (V1 read back from the raw topic) and sends a forged body round once, a second replay does nothing, replay offsets only adds duplicates"
    )
    func replayAfterFix() async throws {
        let mock = try await KafkaMockChild.start(
            executable: ASNPProcess.executable,
            arguments: ["--topic", "\(Self.topic):4"]
                + PipelineTopics.outputs
                .flatMap { ["--topic", "\($0):2"] }
        )
        defer { mock.stop() }
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let databaseURL = server.url(database: database.database)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-replay-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configFile = directory.appendingPathComponent("replay.json")
        try Data(
            """
            {"kafka": {"bootstrapServers": "\(mock.bootstrapServers)"}, "database": {"url": "\(databaseURL)"}}
            """.utf8
        ).write(to: configFile)

        // Bodies for app "notes" while the workers only know "other": every one is rejected as UNKNOWN_APP.
        let v2Bodies = Fixtures.v2Cases.filter { $0.expectedStatus == "OK" }.map(\.body)
        // V1 bodies are stored with their password redacted: only the raw topic can give them back.
        let v1Bodies = Fixtures.v1Cases.filter { $0.expectedStatus == "OK" }.map(\.body)
        let bodies = v2Bodies + v1Bodies
        // A forged body for the same app: rejected for the app first, then, replayed, for its signature.
        let forged = try #require(Fixtures.v2Cases.first { $0.id == "bad-outer-signature" }).body
        let uuids = Set(v2Bodies.compactMap(Self.notificationUUID))
        let notifications = uuids.count + v1Bodies.count
        var worker = try await Self.startWorker(mock: mock, databaseURL: databaseURL, apps: "other")
        try await WorkerProcess.produce(
            v2Bodies + [forged],
            bootstrapServers: mock.bootstrapServers,
            topic: Self.topic
        )
        try await WorkerProcess.produce(
            v1Bodies,
            version: 1,
            bootstrapServers: mock.bootstrapServers,
            topic: Self.topic
        )
        #expect(
            try await Self.wait(
                server,
                database.database,
                "SELECT count(*) FROM rejected_notifications",
                "\(bodies.count + 1)",
                worker: worker
            )
        )
        try await worker.stop()

        // The app is configured now; replay the rejections.
        worker = try await Self.startWorker(mock: mock, databaseURL: databaseURL, apps: "notes")
        defer { worker.cancel() }
        let replay = try await ASNPProcess.run([
            "replay", "rejected", "--config", configFile.path, "--status", "UNKNOWN_APP",
        ])
        #expect(replay.status == 0, "\(replay.standardError)")
        #expect(replay.standardOutput.contains("replayed \(bodies.count + 1) rejected notification(s)"))
        #expect(
            try await Self.wait(
                server,
                database.database,
                "SELECT count(*) FROM notifications",
                "\(notifications)",
                worker: worker
            )
        )
        #expect(!replay.standardOutput.contains("V1"), "\(replay.standardOutput)")
        let marked = try await server.psql(
            database.database,
            "SELECT count(*) FROM rejected_notifications WHERE replayed_at IS NOT NULL"
        )
        #expect(marked == "\(bodies.count + 1)")
        #expect(
            try await Self.wait(
                server,
                database.database,
                "SELECT count(*) FROM rejected_notifications WHERE headers->>'asnp-source' = 'replay'",
                "1",
                worker: worker
            )
        )

        // Again: nothing left to replay. The forged body, rejected again after its replay, is not sent round again
        // (each replay would send every forged body ever received once more).
        let again = try await ASNPProcess.run(["replay", "rejected", "--config", configFile.path])
        #expect(again.status == 0)
        #expect(again.standardOutput.hasPrefix("replayed 0 rejected notification(s)"))

        // The raw topic's first messages of partition 0, again: duplicates only, nothing new, nothing rejected.
        let offsets = try await ASNPProcess.run([
            "replay", "offsets", "--config", configFile.path, "--partition", "0", "--from", "0", "--to", "1000",
        ])
        #expect(offsets.status == 0, "\(offsets.standardError)")
        #expect(offsets.standardOutput.contains("replayed "))
        let replayedCount = Int(offsets.standardOutput.split(separator: " ")[1]) ?? 0
        #expect(replayedCount > 0)
        // The replayed messages are consumed (the group's lag drops to zero) and change nothing.
        let admin = try KafkaAdminClient(
            cluster: KafkaClusterConfiguration(bootstrapServers: mock.bootstrapServers),
            logger: Logger(label: "test.replay")
        )
        var lag: Int64 = -1
        for _ in 0..<200 where lag != 0 {
            lag = try await admin.consumerLag(group: "asnp-workers", topic: Self.topic).map(\.lag).reduce(0, +)
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(lag == 0)
        let counts = try await server.psql(
            database.database,
            "SELECT (SELECT count(*) FROM notifications) || '/' || (SELECT count(*) FROM rejected_notifications)"
        )
        #expect(counts == "\(notifications)/\(bodies.count + 2)")

        // A range the partition does not hold is an error, not a silent no-op.
        let beyond = try await ASNPProcess.run([
            "replay", "offsets", "--config", configFile.path, "--partition", "0", "--from", "5000", "--to", "5001",
        ])
        #expect(beyond.status != 0)
        #expect(beyond.standardError.contains("does not hold offset 5000"), "\(beyond.standardError)")
        try await worker.stop()
    }

    @Test("A database that is not there: replay rejected exits 3 (could not do its work), not 2 (usage), naming it")
    func unreachableDatabase() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-replay-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configFile = directory.appendingPathComponent("replay.json")
        try Data(
            """
            {"kafka": {"bootstrapServers": "127.0.0.1:1"},
             "database": {"url": "postgres://postgres@127.0.0.1:1/asnp?sslmode=disable", "timeoutSeconds": 2}}
            """.utf8
        ).write(to: configFile)
        let replay = try await ASNPProcess.run(["replay", "rejected", "--config", configFile.path])
        #expect(replay.status == 3, "\(replay.standardError)")
        #expect(replay.standardError.contains("UNAVAILABLE"), "\(replay.standardError)")
        #expect(replay.standardError.contains("127.0.0.1:1"), "\(replay.standardError)")
    }

    /// The notificationUUID inside a V2 body's signed payload (unverified: a test's bookkeeping).
    static func notificationUUID(_ body: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let payload = object["signedPayload"] as? String,
            let part = payload.split(separator: ".").dropFirst().first
        else { return nil }
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
            let decoded = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return decoded["notificationUUID"] as? String
    }

    static func startWorker(mock: KafkaMockChild, databaseURL: String, apps: String) async throws -> InProcessWorker {
        try await InProcessWorker.start(bootstrapServers: mock.bootstrapServers, databaseURL: databaseURL, app: apps)
    }

    /// Polls `sql` until it answers `expected` (600 tries 100 ms apart at most); throws what ended `worker`'s run if
    /// it failed meanwhile, instead of waiting out the tries for work nobody does any more.
    static func wait(
        _ server: TestPostgresServer,
        _ database: String,
        _ sql: String,
        _ expected: String,
        worker: InProcessWorker? = nil
    ) async throws -> Bool {
        for _ in 0..<600 {
            if (try? await server.psql(database, sql)) == expected { return true }
            try worker?.checkRunning()
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
