import AppStoreModels
import AppStoreTestSupport
import ChildProcesses
import CommandSupport
import Foundation
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing

@Suite("asnp worker as a process: settings from the environment, ready, SIGTERM", .tags(.process))
struct WorkerCommandTests {
    @Test("It migrates, becomes ready on its status port, and exits 0 on SIGTERM")
    func readyThenSigterm() async throws {
        let mock = try await KafkaMockChild.start(
            executable: ASNPProcess.executable,
            arguments: ["--topic", "\(PipelineTopics.raw):2"]
                + PipelineTopics.outputs.flatMap { ["--topic", "\($0):1"] }
        )
        defer { mock.stop() }
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let statusPort = try LoopbackPort.free()
        let worker = try WorkerProcess.start(
            bootstrapServers: mock.bootstrapServers,
            databaseURL: server.url(database: database.database),
            statusPort: statusPort,
            arguments: ["--migrate", "--log-level", "warning"]
        )
        defer { if worker.isRunning { worker.terminate() } }

        let ready = try await WorkerProcess.waitUntilReady(statusPort: statusPort, while: worker)
        #expect(ready, "asnp worker did not become ready")
        #expect(try await server.psql(database.database, "SELECT count(*) FROM asnp_schema_migrations") != "0")

        worker.terminate()
        await worker.exited()
        #expect(worker.terminationReason == .exit && worker.terminationStatus == 0)
    }

    @Test(
        """
        LOG_FORMAT=json: one JSON object per line, with the fields an operator searches by (offset, partition, \
        request id, notification UUID, subscription, rejection); an unknown format is a usage error
        """
    )
    func jsonLogs() async throws {
        let mock = try await KafkaMockChild.start(
            executable: ASNPProcess.executable,
            arguments: ["--topic", "\(PipelineTopics.raw):1"]
                + PipelineTopics.outputs.flatMap { ["--topic", "\($0):1"] }
        )
        defer { mock.stop() }
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let statusPort = try LoopbackPort.free()
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-worker-\(UUID()).log")
        try #require(FileManager.default.createFile(atPath: logFile.path, contents: nil), "\(logFile.path)")
        defer { try? FileManager.default.removeItem(at: logFile) }
        let worker = try WorkerProcess.start(
            bootstrapServers: mock.bootstrapServers,
            databaseURL: server.url(database: database.database),
            statusPort: statusPort,
            arguments: ["--migrate", "--log-level", "debug"],
            extra: ["LOG_FORMAT": "json"],
            standardError: .file(logFile.path)
        )
        defer { if worker.isRunning { worker.terminate() } }
        #expect(try await WorkerProcess.waitUntilReady(statusPort: statusPort, while: worker))

        let valid = try #require(Fixtures.v2Cases.first { $0.expectedStatus == "OK" })
        guard case .string(let uuid)? = valid.expect["notificationUUID"] else {
            Issue.record("the fixture names no notificationUUID")
            return
        }
        try await WorkerProcess.produce(
            [valid.body, #"{"signedPayload": "not a JWS"}"#],
            bootstrapServers: mock.bootstrapServers,
            topic: PipelineTopics.raw
        )
        func entries() throws -> [[String: Any]] {
            try String(contentsOf: logFile, encoding: .utf8).split(separator: "\n").map { line in
                try #require(
                    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    "not a JSON object: \(line)"
                )
            }
        }
        // Logged once the batch is stored; the worker promises no time for that.
        while worker.isRunning,
            try entries().filter({ ($0["message"] as? String)?.hasPrefix("Notification ") == true }).count < 2
        {
            try await Task.sleep(for: .milliseconds(200))
        }
        worker.terminate()
        await worker.exited()
        let lines = try entries()
        #expect(lines.count > 2)
        #expect(lines.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
        let verified = try #require(lines.first { $0["message"] as? String == "Notification verified" })
        #expect(verified["notification.uuid"] as? String == uuid.lowercased())
        #expect(verified["original_transaction_id"] is String)
        for line in [verified, try #require(lines.first { $0["message"] as? String == "Notification rejected" })] {
            #expect(line["kafka.partition"] as? String != nil && line["kafka.offset"] as? String != nil, "\(line)")
            #expect(line["request.id"] is String, "\(line)")
        }
        #expect(lines.contains { $0["rejection.status"] as? String == "VERIFICATION_FAILURE" })

        let unknown = try await ASNPProcess.run(["worker", "--help"], environment: ["LOG_FORMAT": "yaml"])
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains("log.format (LOG_FORMAT) is 'yaml'"))
    }
}
