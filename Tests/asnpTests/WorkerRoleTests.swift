import AppStoreModels
import AppStoreTestSupport
import AsyncHTTPClient
import CommandSupport
import Foundation
import KafkaClient
import Logging
import NIOCore
import NIOHTTP1
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing

@Suite(
    "The worker role built in-process as `asnp worker` builds it: settings from the environment, migrate, store, status",
    .tags(.process)
)
struct WorkerRoleTests {
    struct ScenarioLine: Decodable {
        var key: String
        var uuid: String
        var body: String
    }

    @Test(
        "The scenario produced to the raw topic ends in PostgreSQL as scenario-final.json says; a graceful shutdown ends the run"
    )
    func scenario() async throws {
        let topic = PipelineTopics.raw
        let mock = try await KafkaMockChild.start(
            executable: ASNPProcess.executable,
            arguments: ["--topic", "\(topic):4"]
                + PipelineTopics.outputs
                .flatMap { ["--topic", "\($0):2"] }
        )
        defer { mock.stop() }
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()

        let statusPort = try LoopbackPort.free()
        let worker = try await InProcessWorker.start(
            bootstrapServers: mock.bootstrapServers,
            databaseURL: server.url(database: database.database),
            statusPort: statusPort
        )
        defer { worker.cancel() }

        let lines = try String(contentsOf: Fixtures.directory.appendingPathComponent("scenario.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { try JSONDecoder().decode(ScenarioLine.self, from: Data($0.utf8)) }
        try await WorkerProcess.produce(
            lines.shuffled().map(\.body),
            bootstrapServers: mock.bootstrapServers,
            topic: topic
        )

        let unique = Set(lines.map(\.uuid)).count
        let count = "SELECT count(*) FROM notifications"
        #expect(try await ReplayCommandTests.wait(server, database.database, count, String(unique), worker: worker))

        // The status endpoints: ready while consuming; the metrics count what was stored.
        let client = HTTPClient.shared
        func get(_ path: String) async throws -> (status: UInt, body: String) {
            let response = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(statusPort)\(path)"),
                timeout: .seconds(10)
            )
            let body = try await response.body.collect(upTo: 1 << 20)
            return (response.status.code, String(buffer: body))
        }
        let ready = try await get("/health/ready")
        #expect(ready.status == 200)
        let live = try await get("/health/live")
        #expect(live.status == 200)
        let metrics = try await get("/metrics")
        #expect(metrics.status == 200)
        let metricLines = Set(metrics.body.split(separator: "\n").map(String.init))
        #expect(metricLines.contains("asnp_worker_notifications_total{result=\"new\"} \(unique)"))
        #expect(metricLines.contains("asnp_worker_messages_total \(lines.count)"))
        #expect(metricLines.contains { $0.hasPrefix("asnp_worker_consumer_lag_messages{") })
        #expect(metricLines.contains { $0.hasPrefix("asnp_worker_outbox_rows ") })
        #expect(metricLines.contains { $0.hasPrefix("asnp_store_oldest_body_timestamp_seconds ") })

        try await worker.stop()

        let final = try JSONDecoder().decode([String: String].self, from: Fixtures.data("scenario-final.json"))
        let subscriptions = try await server.psql(
            database.database,
            "SELECT string_agg(original_transaction_id || '=' || last_notification_type, ',' "
                + "ORDER BY original_transaction_id) FROM subscriptions"
        )
        #expect(
            subscriptions == final.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        )
    }
}
