import AppStoreModels
import AppStoreTestSupport
import AppStoreVerification
import ChildProcesses
import CommandSupport
import Foundation
import KafkaClient
import LoadGeneration
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import SwiftASN1
import Testing
import Worker
import X509

@testable import asnp

@Suite("Worker processes killed with SIGKILL mid-batch", .tags(.fault))
struct WorkerCrashTests {
    static let topic = PipelineTopics.raw

    /// Tables reduced to comparable digests: notification ids, subscription states, rejections.
    static func digest(_ server: TestPostgresServer, _ database: String) async throws -> String {
        try await server.psql(
            database,
            """
            SELECT (SELECT count(*) || ':' || md5(string_agg(notification_uuid::text, ',' ORDER BY notification_uuid))
                    FROM notifications)
                || ' ' || (SELECT count(*) || ':' || md5(string_agg(original_transaction_id || '/'
                    || last_notification_uuid || '/' || last_notification_type, ',' ORDER BY original_transaction_id))
                    FROM subscriptions)
                || ' ' || (SELECT count(*) FROM rejected_notifications)
            """
        )
    }

    @Test("Killing a worker with SIGKILL twice while it consumes: the tables end exactly as a clean run leaves them")
    func killNine() async throws {
        // 2,000 bodies of 12 KB over 8 partitions: 3 MB a partition, under the mock's 5 MB.
        let workload = try VerifyWorkload(count: 2_000, chains: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rootFile = directory.appendingPathComponent("root.der")
        try Data(workload.rootDERs[0]).write(to: rootFile)

        let mock = try await KafkaMockChild.start(
            executable: ASNPProcess.executable,
            arguments: ["--topic", "\(Self.topic):8"]
        )
        defer { mock.stop() }
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        var logger = Logger(label: "test.worker-crash")
        logger.logLevel = .critical
        try await NotificationStore.withRunning(configuration: database, logger: logger) { store in
            _ = try await store.migrate()
        }

        func startWorker() throws -> ChildProcess {
            try WorkerProcess.start(
                bootstrapServers: mock.bootstrapServers,
                databaseURL: server.url(database: database.database),
                app: "bench",
                bundleID: VerifyWorkload.bundleId,
                appAppleID: nil,
                rootCertificate: rootFile.path,
                arguments: ["--log-level", "critical"],
                extra: ["WORKER_BATCH_SIZE": "25"]
            )
        }

        let messages = workload.bodies.map {
            KafkaProducerMessage.rawNotification(body: $0, app: "bench", topic: Self.topic)
        }
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                cluster: KafkaClusterConfiguration(bootstrapServers: mock.bootstrapServers)
            ),
            logger: logger
        )
        func storedCount() async -> Int {
            Int((try? await server.psql(database.database, "SELECT count(*) FROM notifications")) ?? "") ?? 0
        }
        /// Polls until the table holds at least `target` rows (or all of them), for up to four minutes.
        func waitForCount(atLeast target: Int) async throws -> Int {
            let deadline = ContinuousClock.now.advanced(by: .seconds(240))
            var count = await storedCount()
            while count < min(target, messages.count), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                count = await storedCount()
            }
            return count
        }

        var workers = [try startWorker(), try startWorker()]
        defer { for worker in workers where worker.isRunning { worker.terminate() } }
        // The messages go to the topic in three parts, the second and third each after a kill: however fast the workers
        // are, each kill comes while messages are left to consume, and each replacement starts with work waiting.
        let firstEnd = messages.count * 2 / 5
        let secondEnd = messages.count * 7 / 10
        let parts = [messages[..<firstEnd], messages[firstEnd..<secondEnd], messages[secondEnd...]]
        let killAt = [firstEnd / 4, firstEnd + 1]
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await producer.run() }
            for (index, part) in parts.enumerated() {
                let reports = await producer.send(contentsOf: Array(part))
                #expect(reports.allSatisfy { (try? $0.get()) != nil })
                guard index < killAt.count else { break }
                _ = try await waitForCount(atLeast: killAt[index])
                workers[0].terminate(SIGKILL)
                await workers[0].exited()
                workers[0] = try startWorker()
            }
            tasks.cancelAll()
        }
        let count = try await waitForCount(atLeast: messages.count)
        #expect(count == messages.count)
        let outputs = try await OutputReconciliation.check(bootstrapServers: mock.bootstrapServers) {
            try await server.psql(database.database, $0)
        }
        #expect(outputs.problems.isEmpty, "after two SIGKILLs: \(outputs.problems)")
        for worker in workers {
            worker.terminate()
            await worker.exited()
        }

        // The reference: the same bodies stored by one clean, in-process pass.
        let reference = try await server.makeDatabase()
        let verifier = RawBatchVerifier(
            directory: VerifierDirectory(
                apps: [PipelineApp(name: "bench", bundleID: VerifyWorkload.bundleId)],
                chainVerifier: ChainVerifier(
                    configuration: .init(trustedRoots: [try Certificate(derEncoded: workload.rootDERs[0])])
                )
            ),
            parallelism: 2
        )
        let consumed = messages.enumerated().map { index, message in
            KafkaMessage(
                topic: Self.topic,
                partition: 0,
                offset: Int64(index),
                key: message.key,
                value: message.value,
                headers: message.headers,
                timestamp: nil
            )
        }
        let batch = try await verifier.batch(for: consumed)
        try await NotificationStore.withRunning(configuration: reference, logger: logger) { store in
            _ = try await store.migrate()
            _ = try await store.write(batch)
        }
        let crashed = try await Self.digest(server, database.database)
        #expect(crashed == (try await Self.digest(server, reference.database)))
        #expect(crashed.hasPrefix("\(messages.count):"))
        let reconciliation = try await PipelineReconciliation.check(
            accepted: workload.bodies.map { String(decoding: $0, as: UTF8.self) },
            server: server,
            database: database.database
        )
        #expect(reconciliation.problems.isEmpty, "\(reconciliation.problems)")
        #expect(reconciliation.stored == messages.count)
    }
}
