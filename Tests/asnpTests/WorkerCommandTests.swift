import AppStoreTestSupport
import CommandSupport
import Foundation
import NotificationStore
import PipelineContract
import StoreTestSupport
import Testing

@Suite("asnp worker as a process: settings from the environment, ready, SIGTERM")
struct WorkerCommandTests {
    @Test("It migrates, becomes ready on its status port, and exits 0 on SIGTERM")
    func readyThenSigterm() async throws {
        let mock = try KafkaMockChild(
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
            databaseURL: "postgres://postgres@127.0.0.1:\(server.port)/\(database.database)?sslmode=disable",
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
}
