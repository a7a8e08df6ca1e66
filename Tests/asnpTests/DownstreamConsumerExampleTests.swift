import AppStoreTestSupport
import Foundation
import KafkaClient
import Logging
import NIOCore
import PipelineContract
import ServiceLifecycle
import Synchronization
import Testing

/// The downstream consumer shown in Docs/contract/README.md, run against librdkafka's mock cluster with events built
/// as the workers build them (`OutputEvent`).
@Suite("The downstream consumer example of Docs/contract/README.md", .tags(.pipeline))
struct DownstreamConsumerExampleTests {
    static let signedDate = Date(timeIntervalSince1970: 1_793_613_600)
    static let product = "com.example.notes.pro.monthly"

    @Test(
        """
        Decoded events of three subscriptions interleaved (V2 and V1), one published twice, one of an unknown major, \
        one published in a new major before its known one: each ce_id handled once, in production order per key, \
        the unknown majors skipped with a log line, every offset committed; the state table holds each key's last state
        """
    )
    func consumesAsTheContractAsks() async throws {
        let logs = LogLines()
        let logger = Logger(label: "test.downstream-consumer") { _ in logs.handler(level: .notice) }
        let mock = try KafkaMockCluster(
            brokers: 1,
            logger: Logger(label: "test.kafka") { _ in SwiftLogNoOpLogHandler() }
        )
        try mock.createTopic(PipelineTopics.decoded, partitions: 4)
        try mock.createTopic(PipelineTopics.subscriptionState, partitions: 4)

        let (a, b, c) = ("5000000001", "5000000002", "5000000003")
        let (a1, a2, a3) = (UUID(), UUID(), UUID())
        let (b1, b2, b3) = (UUID(), UUID(), UUID())
        let (c1, c2, unknown) = (UUID(), UUID(), UUID())
        let decoded = [
            Self.v2(a1, key: a, type: "SUBSCRIBED"),
            Self.v2(b1, key: b, type: "SUBSCRIBED"),
            Self.v1(c1, key: c, type: "INITIAL_BUY"),
            Self.v2(a2, key: a, type: "DID_RENEW"),
            Self.v2(b2, key: b, type: "DID_CHANGE_RENEWAL_STATUS"),
            Self.v2(a2, key: a, type: "DID_RENEW"),
            Self.newMajor(Self.v2(unknown, key: b, type: "DID_RENEW")),
            Self.v1(c2, key: c, type: "DID_RENEW"),
            Self.newMajor(Self.v2(a3, key: a, type: "EXPIRED")),
            Self.v2(a3, key: a, type: "EXPIRED"),
            Self.v2(b3, key: b, type: "DID_RENEW"),
        ]
        let states = [
            Self.state(a, last: a1, type: "SUBSCRIBED"),
            Self.state(b, last: b1, type: "SUBSCRIBED"),
            Self.state(a, last: a2, type: "DID_RENEW"),
        ]

        let handled = Recorder<DownstreamConsumer.Notification>()
        let consumer = DownstreamConsumer(
            cluster: mock.clusterConfiguration,
            groupID: "downstream-example",
            logger: logger
        ) { notification in handled.append(notification) }
        let group = ServiceGroup(services: [consumer], logger: logger)
        let running = Task { try await group.run() }
        defer { running.cancel() }

        var producerConfiguration = KafkaProducerConfiguration(cluster: mock.clusterConfiguration)
        // A fresh producer on a loaded machine: the test waits for acknowledgements, not for a time.
        producerConfiguration.deliveryTimeout = .seconds(60)
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        let reports = try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await producer.run() }
            defer { tasks.cancelAll() }
            // One at a time, each acknowledged before the next: the production order is the order sent.
            var reports: [KafkaDeliveryReport] = []
            for event in decoded + states { reports.append(try await producer.send(event)) }
            return reports
        }
        // Where each decoded partition ends: the group has handled everything once it committed these.
        let ends = Dictionary(
            reports.filter { $0.topicPartition.topic == PipelineTopics.decoded }.map {
                ($0.topicPartition, $0.offset + 1)
            },
            uniquingKeysWith: max
        )

        let expectedTable = [
            a: DownstreamConsumer.Subscription(
                lastNotificationType: "DID_RENEW",
                lastSignedDate: "2026-11-02T10:00:00+00:00",
                productId: Self.product,
                autoRenewStatus: 1
            ),
            b: DownstreamConsumer.Subscription(
                lastNotificationType: "SUBSCRIBED",
                lastSignedDate: "2026-11-02T10:00:00+00:00",
                productId: Self.product,
                autoRenewStatus: 1
            ),
        ]
        let admin = try KafkaAdminClient(cluster: mock.clusterConfiguration, logger: logger)
        // librdkafka gives a member max.poll.interval.ms to join its group; what is stored is then read at once.
        let caughtUp = try await eventually(timeout: consumer.configuration.maxPollInterval) {
            let committed = try await admin.committedOffsets(group: "downstream-example", partitions: Array(ends.keys))
            let table = await consumer.subscriptions
            return committed == ends.mapValues { Optional($0) } && table == expectedTable
        }
        await group.triggerGracefulShutdown()
        try await running.value

        #expect(caughtUp, "every decoded offset committed and the table complete")
        let notifications = handled.all
        let ids = notifications.map(\.id)
        #expect(ids.count == Set(ids).count, "each ce_id handled once: \(ids)")
        #expect(!ids.contains(unknown.lowercased), "the unknown major is skipped")
        func expected(_ id: UUID, _ key: String, _ type: String, v1: Bool = false) -> DownstreamConsumer.Notification {
            DownstreamConsumer.Notification(
                id: id.lowercased,
                key: key,
                schema: v1 ? DownstreamConsumer.decodedV1 : DownstreamConsumer.decodedV2,
                notificationType: type,
                productID: Self.product
            )
        }
        let byKey = Dictionary(grouping: notifications, by: \.key)
        #expect(byKey[a] == [expected(a1, a, "SUBSCRIBED"), expected(a2, a, "DID_RENEW"), expected(a3, a, "EXPIRED")])
        #expect(
            byKey[b] == [
                expected(b1, b, "SUBSCRIBED"), expected(b2, b, "DID_CHANGE_RENEWAL_STATUS"),
                expected(b3, b, "DID_RENEW"),
            ]
        )
        #expect(byKey[c] == [expected(c1, c, "INITIAL_BUY", v1: true), expected(c2, c, "DID_RENEW", v1: true)])
        #expect(byKey.count == 3)
        #expect(
            logs.all.filter { $0.contains("unknown schema") && $0.contains(Self.unknownMajor) }.count == 2,
            "each unknown major's event is logged: \(logs.all)"
        )
        let table = await consumer.subscriptions
        #expect(table == expectedTable, "the last state per key")
    }

    @Test("The ids kept for deduplication are bounded: the oldest are forgotten first")
    func recentIDsAreBounded() {
        var seen = DownstreamConsumer.RecentIDs(capacity: 3)
        for id in ["a", "b", "c", "b", "d"] { seen.insert(id) }
        #expect(!seen.contains("a"))
        #expect(["b", "c", "d"].allSatisfy(seen.contains))
        seen.insert("e")
        #expect(!seen.contains("b") && seen.contains("e"))
    }

    @Test("Docs/contract/README.md's complete consumer shows both example files byte for byte")
    func readmeShowsTheExamples() throws {
        let readme = try Data(contentsOf: Fixtures.packageRoot.appendingPathComponent("Docs/contract/README.md"))
        let section = try #require(readme.range(of: Data("\n## A complete consumer\n".utf8)))
        for (language, path) in [
            ("swift", "Tests/asnpTests/DownstreamConsumerExample.swift"),
            ("python", "Docs/contract/examples/consumer.py"),
        ] {
            let source = try Data(contentsOf: Fixtures.packageRoot.appendingPathComponent(path))
            let block = readme.range(of: Data("\n```\(language)\n".utf8) + source + Data("```\n".utf8))
            #expect(block.map { $0.lowerBound > section.lowerBound } == true, "\(path) verbatim in the section")
        }
    }

    // MARK: - Events as the workers publish them

    static let unknownMajor = "urn:asnp:contract:decoded-v2:2"

    static func v2(_ id: UUID, key: String, type: String) -> KafkaProducerMessage {
        let json = """
            {"payload":{"notificationType":"\(type)","notificationUUID":"\(id.lowercased)","version":"2.0",\
            "signedDate":1793613600000,"data":{"bundleId":"com.example.notes","environment":"Sandbox","status":1}},\
            "transactionInfo":{"originalTransactionId":"\(key)","productId":"\(product)"}}
            """
        return OutputEvent.decoded(
            OutputEvent.DecodedAttributes(
                notificationUUID: id,
                version: 2,
                notificationType: type,
                signedDate: signedDate,
                environment: "Sandbox",
                bundleID: "com.example.notes",
                originalTransactionID: key
            ),
            json: json,
            key: key,
            topic: PipelineTopics.decoded
        )
    }

    static func v1(_ id: UUID, key: String, type: String) -> KafkaProducerMessage {
        let json = """
            {"notification_type":"\(type)","password":"<redacted>","environment":"Sandbox",\
            "original_transaction_id":"\(key)","auto_renew_product_id":"\(product)"}
            """
        return OutputEvent.decoded(
            OutputEvent.DecodedAttributes(
                notificationUUID: id,
                version: 1,
                notificationType: type,
                environment: "Sandbox",
                originalTransactionID: key
            ),
            json: json,
            key: key,
            topic: PipelineTopics.decoded
        )
    }

    /// The event as a later version would publish it under a breaking change: the same ce_id, a new major.
    static func newMajor(_ event: KafkaProducerMessage) -> KafkaProducerMessage {
        var event = event
        event.headers = event.headers.map {
            $0.key == OutputEvent.CloudEventsHeader.dataSchema ? KafkaHeader(key: $0.key, string: unknownMajor) : $0
        }
        return event
    }

    /// A state event: the `subscriptions` row as `to_jsonb` writes it.
    static func state(_ key: String, last: UUID, type: String) -> KafkaProducerMessage {
        let json = """
            {"original_transaction_id":"\(key)","last_notification_uuid":"\(last.lowercased)",\
            "last_notification_type":"\(type)","last_subtype":null,"last_signed_date":"2026-11-02T10:00:00+00:00",\
            "transaction_id":"\(key)","product_id":"\(product)","expires_date":"2026-12-02T10:00:00+00:00",\
            "auto_renew_status":1,"revocation_date":null,"environment":"Sandbox","bundle_id":"com.example.notes",\
            "app_apple_id":null,"updated_at":"2026-11-02T10:00:01.123456+00:00"}
            """
        return OutputEvent.subscriptionState(
            OutputEvent.StateAttributes(
                originalTransactionID: key,
                lastNotificationUUID: last,
                lastSignedDate: signedDate,
                environment: "Sandbox",
                bundleID: "com.example.notes"
            ),
            json: json,
            topic: PipelineTopics.subscriptionState
        )
    }
}

/// What concurrent tasks append and a test reads.
private final class Recorder<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])

    var all: [Element] { elements.withLock { $0 } }

    func append(_ element: Element) {
        elements.withLock { $0.append(element) }
    }
}

extension UUID {
    fileprivate var lowercased: String { uuidString.lowercased() }
}
