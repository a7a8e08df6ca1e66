import AppStoreModels
import AppStoreTestSupport
import AsyncHTTPClient
import ChildProcesses
import CommandSupport
import Configuration
import Foundation
import HistorySync
import HistoryTestSupport
import Ingress
import KafkaClient
import Logging
import NIOCore
import NIOHTTP1
import NotificationStore
import PipelineContract
import PipelineServices
import PipelineStatus
import PostgresRuntime
import Testing
import Worker

@testable import asnp

@Suite("asnp ingress as a process: configuration from the environment, SIGTERM and SIGKILL under load", .tags(.process))
struct IngressCommandTests {
    static let topic = PipelineTopics.raw

    @Test(
        "Every body answered 200 before a SIGTERM or a SIGKILL under load is in the topic; SIGTERM exits 0",
        arguments: [SIGTERM, SIGKILL]
    )
    func signalUnderLoad(_ signal: Int32) async throws {
        let mock = try await KafkaMockChild.start(
            executable: ASNPProcess.executable,
            arguments: ["--topic", "\(Self.topic):8"]
        )
        defer { mock.stop() }
        let port = try LoopbackPort.free()
        let statusPort = try LoopbackPort.free()
        let ingress = try IngressProcess.start(
            bootstrapServers: mock.bootstrapServers,
            port: port,
            statusPort: statusPort
        )
        defer { if ingress.isRunning { ingress.terminate() } }

        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(1), read: .seconds(10))
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let base = "http://127.0.0.1:\(port)"
            let ready = try await IngressProcess.waitUntilReady(statusPort: statusPort, client: client, while: ingress)
            try #require(ready, "asnp ingress did not become ready")

            let bodies = Fixtures.v2Cases.filter { $0.expectedStatus == "OK" }.map(\.body)
            let answered = SharedCount()
            let acknowledged = try await withThrowingTaskGroup(of: [String].self) { group in
                for worker in 0..<6 {
                    group.addTask {
                        var acknowledged: [String] = []
                        for index in 0..<2_000 {
                            var request = HTTPClientRequest(url: "\(base)/v2/notifications/sandbox")
                            request.method = .POST
                            request.body = .bytes(ByteBuffer(string: bodies[(worker + index) % bodies.count]))
                            guard let reply = try? await client.execute(request, timeout: .seconds(10)) else { break }
                            _ = try? await reply.body.collect(upTo: 1 << 16)
                            if reply.status == .ok, let id = reply.headers.first(name: "X-Request-ID") {
                                acknowledged.append(id)
                                answered.increment()
                            }
                        }
                        return acknowledged
                    }
                }
                // Under load: once bodies are being answered (however long that takes on a loaded machine).
                _ = await eventually { answered.value >= 50 }
                ingress.terminate(signal)
                return try await group.reduce(into: []) { $0 += $1 }
            }
            await ingress.exited()
            if signal == SIGTERM {
                #expect(ingress.terminationReason == .exit && ingress.terminationStatus == 0)
            } else {
                #expect(ingress.terminationReason == .uncaughtSignal && ingress.terminationStatus == SIGKILL)
            }
            #expect(!acknowledged.isEmpty)
            #expect(acknowledged.count < 6 * 2_000, "the signal should have come mid-load")

            var logger = Logger(label: "test.ingress-command")
            logger.logLevel = .critical
            var consumerConfiguration = KafkaConsumerConfiguration(
                cluster: KafkaClusterConfiguration(bootstrapServers: mock.bootstrapServers),
                groupID: "check-\(signal)",
                topics: [Self.topic]
            )
            consumerConfiguration.pollMaxWait = .milliseconds(50)
            let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
            var stored = Set<String>()
            let deadline = ContinuousClock.now.advanced(by: .seconds(60))
            while !Set(acknowledged).isSubset(of: stored), ContinuousClock.now < deadline {
                for event in try await consumer.poll(maxMessages: 1_000, maxWait: .milliseconds(50)) {
                    guard case .messages(let messages) = event else { continue }
                    for message in messages {
                        if let id = message.headers.first(named: RawNotificationHeaders.Name.requestID) {
                            stored.insert(id)
                        }
                    }
                }
            }
            try await consumer.close()
            #expect(Set(acknowledged).isSubset(of: stored), "\(Set(acknowledged).subtracting(stored).count) lost")
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test("A missing or malformed setting stops the start with an error naming the key and its variable")
    func configurationErrors() async throws {
        let missing = try await runProgram(ASNPProcess.executable.path, ["ingress"])
        #expect(missing.status == 2)
        let malformed = try await runProgram(
            "sh",
            [
                "-c",
                "APPS_NAMES=notes APPS_NOTES_BUNDLE_ID=com.example.notes KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:1 "
                    + "INGRESS_MAX_BODY_BYTES=big '\(ASNPProcess.executable.path)' ingress 2>&1",
            ]
        )
        #expect(malformed.status == 2)
        let message = String(decoding: malformed.output, as: UTF8.self)
        #expect(message.contains("ingress.maxBodyBytes (environment INGRESS_MAX_BODY_BYTES)"), "\(message)")
    }
}

@Suite("Settings files in Config/", .tags(.process))
struct ConfigFileTests {
    @Test("Config/production.json gives valid worker settings")
    func productionFile() async throws {
        let file = Fixtures.packageRoot.appendingPathComponent("Config/production.json").path
        let settings = try await PipelineSettings.load(file: file)
        // Secret files (Kafka password, shared secrets, path token, database URL) exist only in the container; the
        // worker's own settings do not read them.
        let worker = try settings.worker(cluster: KafkaClusterConfiguration(bootstrapServers: "kafka-0.kafka:9093"))
        #expect(worker.consumer.groupID == "asnp-workers")
        #expect(worker.maximumConcurrentBatches == 4)
        #expect(worker.maximumConcurrentWrites == 1)
        #expect(worker.transactionInterval == .milliseconds(200))
        #expect(worker.storedOffsetCheckInterval == .seconds(30))
        #expect(worker.consumer.sessionTimeout == .seconds(45))
        #expect(try settings.workerStatus().port == 9090)
    }

    /// Settings loaded from a file holding `json`.
    static func settings(_ json: String) async throws -> PipelineSettings {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-settings-\(UUID()).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await PipelineSettings.load(file: file.path)
    }

    @Test("worker.transactionIntervalSeconds may be 0 (transactions as often as the database answers), not negative")
    func transactionInterval() async throws {
        let cluster = KafkaClusterConfiguration(bootstrapServers: "127.0.0.1:9092")
        func settings(_ seconds: String) async throws -> PipelineSettings {
            try await Self.settings(#"{"worker": {"transactionIntervalSeconds": \#(seconds)}}"#)
        }
        #expect(try await settings("0").worker(cluster: cluster).transactionInterval == .zero)
        #expect(try await settings("0.05").worker(cluster: cluster).transactionInterval == .milliseconds(50))
        let negative = try await settings("-1")
        #expect(throws: SettingsError.self) { try negative.worker(cluster: cluster) }
    }

    @Test("worker.storedOffsetCheckSeconds sets how often a running worker looks for a restored database; 0 is refused")
    func storedOffsetCheck() async throws {
        let cluster = KafkaClusterConfiguration(bootstrapServers: "127.0.0.1:9092")
        func settings(_ seconds: String) async throws -> PipelineSettings {
            try await Self.settings(#"{"worker": {"storedOffsetCheckSeconds": \#(seconds)}}"#)
        }
        #expect(try await settings("5").worker(cluster: cluster).storedOffsetCheckInterval == .seconds(5))
        let zero = try await settings("0")
        #expect(throws: SettingsError.self) { try zero.worker(cluster: cluster) }
    }

    @Test("Config/production.json gives valid reconciler settings once its secrets are there")
    func productionHistory() async throws {
        let file = Fixtures.packageRoot.appendingPathComponent("Config/production.json").path
        // The secrets come from the environment here instead of the container's files.
        let settings = try await PipelineSettings.load(
            file: file,
            environment: [
                "APPS_NOTES_API_PRIVATE_KEY": FakeAppStoreServer(bundleID: "x", history: []).privateKeyPEM,
                "KAFKA_SASL_PASSWORD": "secret",
                "APPS_NOTES_SHARED_SECRETS": "v1-secret",
                "DATABASE_URL": "postgres://asnp@db:5432/asnp",
            ]
        )
        let history = try settings.historyRole(appName: "notes")
        #expect(history.apps.map(\.api.keyID) == ["ABC123DEFG"])
        #expect(history.apps.map(\.api.bundleID) == ["com.example.notes"])
        #expect(history.requestsPerSecond == 10)
        #expect(history.environments == [.production, .sandbox], "both, unless history.environments says otherwise")
        // Without --app: every app with an API key; the production config has one.
        #expect(try settings.historyRole(appName: nil).apps.map(\.app.name) == ["notes"])
        #expect(try settings.historyRole(appName: nil, environment: .sandbox).environments == [.sandbox])
        #expect(throws: SettingsError.self) { try settings.historyRole(appName: "games") }
    }

    @Test("history.secondLookSeconds: six hours unless set, 0 turns the second look off, a negative value is refused")
    func secondLookSetting() async throws {
        let file = Fixtures.packageRoot.appendingPathComponent("Config/production.json").path
        let settings = { (secondLook: String?) in
            var environment = [
                "APPS_NOTES_API_PRIVATE_KEY": FakeAppStoreServer(bundleID: "x", history: []).privateKeyPEM,
                "KAFKA_SASL_PASSWORD": "secret",
                "APPS_NOTES_SHARED_SECRETS": "v1-secret",
                "DATABASE_URL": "postgres://asnp@db:5432/asnp",
            ]
            environment["HISTORY_SECOND_LOOK_SECONDS"] = secondLook
            return try await PipelineSettings.load(file: file, environment: environment)
        }
        #expect(try await settings(nil).historyRole(appName: "notes").secondLook == .seconds(21_600))
        #expect(try await settings("0").historyRole(appName: "notes").secondLook == .zero)
        #expect(try await settings("43200").historyRole(appName: "notes").secondLook == .seconds(43_200))
        let negative = try await settings("-1")
        #expect(throws: SettingsError.self) { try negative.historyRole(appName: "notes") }
    }

    @Test("database.preparedStatements: on by default, off for a pooler that cannot keep them")
    func preparedStatementsSetting() async throws {
        let file = Fixtures.packageRoot.appendingPathComponent("Config/production.json").path
        let url = "postgres://asnp@db:5432/asnp"
        let defaults = try await PipelineSettings.load(file: file, environment: ["DATABASE_URL": url])
        #expect(try defaults.database().usesPreparedStatements)
        let pooled = try await PipelineSettings.load(
            file: file,
            environment: ["DATABASE_URL": url, "DATABASE_PREPARED_STATEMENTS": "false"]
        )
        #expect(try pooled.database().usesPreparedStatements == false)
    }

    @Test("Config/ingress.dev.json gives a valid ingress, with the environment winning over the file")
    func devFile() async throws {
        let file = Fixtures.packageRoot.appendingPathComponent("Config/ingress.dev.json").path
        // Given as the environment, not set with setenv: the suite runs tests in parallel, and changing the process's
        // environment while another thread reads it (starting a child process) is undefined.
        let settings = try await PipelineSettings.load(file: file, environment: ["INGRESS_PORT": "9191"])
        let apps = try settings.apps()
        #expect(apps.map(\.name) == ["notes"])
        #expect(apps.first?.bundleID == "com.example.notes")
        #expect(apps.first?.appAppleID == 1_234_567_890)
        let ingress = try settings.ingress(apps: apps)
        #expect(ingress.port == 9191)
        #expect(ingress.host == "127.0.0.1")
        #expect(ingress.acknowledgementTimeout == .seconds(2))
        // The probes and /metrics on the loopback, beside a worker's default 9090.
        #expect(try settings.ingressRole().status == StatusServerConfiguration(host: "127.0.0.1", port: 9091))
        #expect(ingress.maximumBodySize == 256 * 1_024)
        #expect(try settings.kafkaCluster(clientID: "x").bootstrapServers == ["127.0.0.1:9092"])
    }

    @Test(
        "Environment names of keys",
        arguments: [
            ("ingress.maxBodyBytes", "INGRESS_MAX_BODY_BYTES"), ("kafka.bootstrapServers", "KAFKA_BOOTSTRAP_SERVERS"),
            ("apps.notes.bundleId", "APPS_NOTES_BUNDLE_ID"), ("apps.my-app.appAppleId", "APPS_MY_APP_APP_APPLE_ID"),
            ("a.httpURL", "A_HTTP_URL"),
        ]
    )
    func environmentNames(key: String, name: String) {
        #expect(PipelineSettings.environmentName(of: key) == name)
        // The name our errors print is the one swift-configuration's environment provider looks up.
        let reader = ConfigReader(provider: EnvironmentVariablesProvider(environmentVariables: [name: "found"]))
        #expect(reader.string(forKey: ConfigKey(key)) == "found")
    }
}
