import AppStoreSigning
import AppStoreTestSupport
import AsyncHTTPClient
import ChildProcesses
import CommandSupport
import Foundation
import KafkaClient
import LoadGeneration
import Logging
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing

@testable import asnp

/// The pipeline as separate processes, as deployed: `asnp ingress`, two `asnp worker`s, a Kafka cluster (librdkafka's
/// mock, in this process so faults can be injected into it) and PostgreSQL. Load is posted as Apple posts it: a body
/// not answered 200 is posted again until it is.
///
/// Two faults at a time, one of each suite below: each case runs a whole pipeline, and five at once starved the
/// timing-sensitive tests of a full parallel run; one at a time made the five the longest chain of the test run.
@Suite("The whole pipeline under load through broker, PostgreSQL, ingress and worker faults", .tags(.fault))
struct PipelineFaultTests {
    @Suite("The broker's faults, one at a time", .serialized, .tags(.fault))
    struct BrokerFaults {
        @Test(
            """
            Posting at 200/s over 16 connections through a broker fault mid-load: every body accepted in the end, \
            each notification stored once, each tampered delivery rejected, subscriptions as last-writer-wins has them
            """,
            arguments: [Fault.brokersUnresponsive, .produceErrorsAndLatency]
        )
        func faultUnderLoad(_ fault: Fault) async throws {
            try await PipelineFaultTests.faultUnderLoad(fault)
        }
    }

    @Suite("PostgreSQL's and the processes' faults, one at a time", .serialized, .tags(.fault))
    struct ProcessFaults {
        @Test(
            """
            Posting at 200/s over 16 connections through a PostgreSQL, ingress or worker fault mid-load: every body \
            accepted in the end, each notification stored once, each tampered delivery rejected, subscriptions as \
            last-writer-wins has them
            """,
            arguments: [Fault.postgresStopped, .ingressKilled, .workersKilled]
        )
        func faultUnderLoad(_ fault: Fault) async throws {
            try await PipelineFaultTests.faultUnderLoad(fault)
        }
    }

    enum Fault: String, CustomTestStringConvertible, Sendable {
        case brokersUnresponsive
        case produceErrorsAndLatency
        case postgresStopped
        case ingressKilled
        case workersKilled

        var testDescription: String {
            switch self {
            case .brokersUnresponsive: "every broker unresponsive for 4 s"
            case .produceErrorsAndLatency: "produce requests refused with transient errors, 100 ms round trips"
            case .postgresStopped: "PostgreSQL stopped for 6 s"
            case .ingressKilled: "the ingress killed with SIGKILL and started again"
            case .workersKilled: "a worker killed with SIGKILL twice, each replaced"
            }
        }
    }

    static let bundleID = "com.example.notes"

    /// What every case posts, and the root its chains end at: signed once, for signing 1,800 notifications was much of
    /// a case's work. Each case still runs a pipeline of its own.
    static let load = Result { () throws -> (root: Data, workload: LoadWorkload) in
        let pki = try TestPKI()
        let workload = try LoadWorkload.make(
            count: 1_800,
            bundleId: bundleID,
            pki: pki,
            duplicateShare: 0.05,
            outOfOrderShare: 0.1,
            hostileShare: 0.01,
            seed: 11
        )
        return (Data(try pki.rootDER()), workload)
    }

    /// Posting at 200/s over 16 connections through a fault mid-load: every body is accepted in the end (retried
    /// while the ingress answers 503), and the reconciliation holds: each notification stored once, each tampered
    /// delivery rejected, subscriptions as last-writer-wins computes them.
    static func faultUnderLoad(_ fault: Fault) async throws {
        var logger = Logger(label: "test.pipeline-fault")
        logger.logLevel = .critical
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-fault-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (root, workload) = try Self.load.get()
        let rootFile = directory.appendingPathComponent("root.der")
        try root.write(to: rootFile)

        let cluster = try KafkaMockCluster(brokers: 3, logger: logger)
        try cluster.createTopic(PipelineTopics.raw, partitions: 8)
        for topic in PipelineTopics.outputs {
            try cluster.createTopic(topic, partitions: 4)
        }
        // A server of its own where the case stops it; the shared one (and a database of the case's own) otherwise.
        let server =
            fault == .postgresStopped ? try await TestPostgresServer.start() : try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let port = try LoopbackPort.free()
        let statusPort = try LoopbackPort.free()
        func startIngress() throws -> ChildProcess {
            try IngressProcess.start(
                bootstrapServers: cluster.bootstrapServers,
                port: port,
                statusPort: statusPort,
                bundleID: Self.bundleID,
                extra: ["INGRESS_ACK_TIMEOUT_SECONDS": "1"]
            )
        }
        func startWorker() throws -> ChildProcess {
            try WorkerProcess.start(
                bootstrapServers: cluster.bootstrapServers,
                databaseURL: server.url(database: database.database),
                bundleID: Self.bundleID,
                appAppleID: nil,
                rootCertificate: rootFile.path
            )
        }
        var ingress = try startIngress()
        var workers = try (0..<2).map { _ in try startWorker() }
        defer { for process in workers + [ingress] where process.isRunning { process.terminate() } }

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let ready = try await IngressProcess.waitUntilReady(statusPort: statusPort, client: client, while: ingress)
        try await client.shutdown()
        try #require(ready, "asnp ingress did not become ready")

        let load = Task {
            try await LoadRun(
                url: "http://127.0.0.1:\(port)/v2/notifications/sandbox",
                connections: 16,
                rate: 200,
                retryDelay: .milliseconds(500)
            ).run(workload.bodies)
        }
        // Mid-load: the fault begins once the pipeline stores what is posted (the load runs ~9 s at 200/s).
        // (The workers create the tables as they start: until then the count fails, and is read as none.)
        let flowing = await eventually {
            let stored = try? await server.psql(database.database, "SELECT count(*) FROM notifications")
            return (stored.flatMap { Int($0) } ?? 0) >= 100
        }
        try #require(flowing, "nothing of the load was stored")
        var storedAtRestart: Int?
        switch fault {
        case .brokersUnresponsive:
            // Not set_down: librdkafka 2.0.2's mock re-binds a downed broker's port and aborts if it was taken
            // (Docs/kafka.md). A broker answering after 5 s is down for a 1 s acknowledgement deadline.
            for broker in cluster.brokerIDs { try cluster.setRoundTripTime(.seconds(5), broker: broker) }
            try await Task.sleep(for: .seconds(4))
            for broker in cluster.brokerIDs { try cluster.setRoundTripTime(.zero, broker: broker) }
        case .produceErrorsAndLatency:
            // Every client's produce requests: the ingress's to the raw topic and the workers' output events.
            for broker in cluster.brokerIDs { try cluster.setRoundTripTime(.milliseconds(100), broker: broker) }
            let transient: [KafkaMockCluster.BrokerError] = [
                .notEnoughReplicas, .notLeaderForPartition, .requestTimedOut, .notEnoughReplicasAfterAppend,
                .leaderNotAvailable,
            ]
            cluster.injectErrors(Array(repeating: transient, count: 8).flatMap { $0 }, into: .produce)
            try await Task.sleep(for: .seconds(4))
            for broker in cluster.brokerIDs { try cluster.setRoundTripTime(.zero, broker: broker) }
        case .postgresStopped:
            try await server.stop()
            try await Task.sleep(for: .seconds(6))
            try await server.restart()
            // Stored so far: the workers could not keep up through the outage (else it proved nothing).
            storedAtRestart = Int(try await server.psql(database.database, "SELECT count(*) FROM notifications"))
        case .ingressKilled:
            ingress.terminate(SIGKILL)
            await ingress.exited()
            try await Task.sleep(for: .seconds(1))
            ingress = try startIngress()
        case .workersKilled:
            for _ in 0..<2 {
                workers[0].terminate(SIGKILL)
                await workers[0].exited()
                workers[0] = try startWorker()
                try await Task.sleep(for: .seconds(2))
            }
        }
        let report = try await load.value
        #expect(report.ok == workload.bodies.count, "every body accepted in the end")
        switch fault {
        case .brokersUnresponsive, .ingressKilled:
            #expect(report.retries > 0, "the ingress could not take every post meanwhile: \(report.statuses)")
        case .postgresStopped:
            #expect(report.retries == 0, "the ingress does not need PostgreSQL: \(report.statuses)")
            #expect(try #require(storedAtRestart) < workload.notifications / 2, "stored before the restart")
        case .produceErrorsAndLatency, .workersKilled:
            break
        }

        // A post answered 503 may still be on the topic (stored by the broker, its acknowledgement lost).
        let unanswered = report.unanswered.map { workload.bodies[$0] }
        var lastCheck: PipelineReconciliation?
        _ = try await eventually(timeout: .seconds(120)) {
            lastCheck = try await PipelineReconciliation.check(
                accepted: workload.bodies,
                unanswered: unanswered,
                server: server,
                database: database.database
            )
            return lastCheck?.problems.isEmpty == true
        }
        let reconciliation = try #require(lastCheck)
        #expect(reconciliation.problems.isEmpty, "\(reconciliation.problems)")
        #expect(reconciliation.stored == workload.notifications)
        #expect(reconciliation.rejectedDeliveries >= workload.hostile)
        let outputs = try await OutputReconciliation.check(
            bootstrapServers: cluster.clusterConfiguration.bootstrapServers.joined(separator: ",")
        ) { try await server.psql(database.database, $0) }
        #expect(outputs.problems.isEmpty, "\(fault): \(outputs.problems)")

        for process in workers + [ingress] {
            process.terminate()
            await process.exited()
            #expect(process.terminationReason == .exit && process.terminationStatus == 0, "SIGTERM: a clean exit")
        }
    }
}
