import Foundation
import KafkaClient
import Logging
import NIOCore
import ServiceLifecycle

/// A downstream team's consumer of the pipeline's output topics (Docs/contract/README.md, "A complete consumer"),
/// on this package's KafkaClient. One consumer group reads both topics:
///
/// - the decoded topic: each notification handed to `handler` once (deduplicated on `ce_id`), in order per key, the
///   offsets committed only after handling;
/// - the state topic, as a table: per subscription (key), the latest state.
actor DownstreamConsumer: Service {
    /// A decoded event, as the application sees it.
    struct Notification: Sendable, Hashable {
        /// `ce_id`: the deduplication key.
        var id: String
        /// The originalTransactionId (the `ce_id` for a notification without one).
        var key: String
        /// `ce_dataschema`: which shape the value had.
        var schema: String
        var notificationType: String
        var productID: String?
    }

    /// A subscription's row from the state topic: the columns this application reads (others are ignored).
    struct Subscription: Sendable, Hashable, Decodable {
        var lastNotificationType: String
        var lastSignedDate: String
        var productId: String?
        var autoRenewStatus: Int?
    }

    static let decodedV2 = "urn:asnp:contract:decoded-v2:1"
    static let decodedV1 = "urn:asnp:contract:decoded-v1:1"
    static let subscriptionState = "urn:asnp:contract:subscription-state:1"

    let configuration: KafkaConsumerConfiguration
    private let decodedTopic: String
    private let stateTopic: String
    private let handler: @Sendable (Notification) async throws -> Void
    private let logger: Logger
    /// V2 names are camelCase, V1's and the state rows' snake_case: this reads both.
    private let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()
    /// The ids handled lately. A real consumer keeps them in its own database and records each in the same
    /// transaction as the event's effect, so that neither a crash nor a partition moving to another member (both
    /// replay events) repeats an effect.
    private var seen = RecentIDs(capacity: 100_000)
    /// The state topic's partitions this member owns, each a table: key → the latest state.
    private var tables: [KafkaTopicPartition: [String: Subscription]] = [:]

    init(
        cluster: KafkaClusterConfiguration,
        groupID: String,
        decodedTopic: String = "appstore.notifications.decoded",
        stateTopic: String = "appstore.subscriptions.state",
        logger: Logger,
        handler: @escaping @Sendable (Notification) async throws -> Void
    ) {
        var configuration = KafkaConsumerConfiguration(
            cluster: cluster,
            groupID: groupID,
            topics: [decodedTopic, stateTopic]
        )
        // The state topic's offsets are never committed, so every start reads it from its first event.
        configuration.startWithoutCommittedOffset = .earliest
        self.configuration = configuration
        self.decodedTopic = decodedTopic
        self.stateTopic = stateTopic
        self.logger = logger
        self.handler = handler
    }

    /// The table: each subscription whose state partition this member owns → its latest state.
    var subscriptions: [String: Subscription] {
        tables.values.reduce(into: [:]) { table, partition in table.merge(partition) { _, last in last } }
    }

    /// Consumes until graceful shutdown; throws what `handler` throws, without committing that event.
    func run() async throws {
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        do {
            for try await event in consumer.events().cancelOnGracefulShutdown() {
                switch event {
                case .messages(let messages):
                    try await consume(messages, from: consumer)
                case .partitionsRevoked(let revocation):
                    // Their next owner reads them from the beginning.
                    for partition in revocation.partitions { tables[partition] = nil }
                case .partitionsAssigned, .offsetGap:
                    break
                }
            }
        } catch {
            try? await consumer.close()
            throw error
        }
        try await consumer.close()
    }

    /// Messages come in offset order per partition, so per key: each is handled before the next one starts.
    private func consume(_ messages: [KafkaMessage], from consumer: KafkaConsumer) async throws {
        for message in messages {
            if message.topic == stateTopic {
                apply(message)
            } else {
                try await handle(message)
            }
        }
        do {
            try await consumer.commit(messages.filter { $0.topic == decodedTopic }.nextOffsets)
        } catch {
            // The partitions moved or the coordinator is unreachable: these events come again, as duplicates.
            logger.warning("offsets not committed", metadata: ["error": "\(error)"])
        }
    }

    private func handle(_ message: KafkaMessage) async throws {
        guard let id = message.headers.first(named: "ce_id"), let key = message.key.map({ String(buffer: $0) }) else {
            logger.error("skipping an event without ce_id or key")
            return
        }
        let schema = message.headers.first(named: "ce_dataschema") ?? ""
        let body = Data(message.value.readableBytesView)
        let notification: Notification
        do {
            switch schema {
            case Self.decodedV2:
                let value = try decoder.decode(DecodedV2.self, from: body)
                notification = Notification(
                    id: id,
                    key: key,
                    schema: schema,
                    notificationType: value.payload.notificationType,
                    productID: value.transactionInfo?.productId
                )
            case Self.decodedV1:
                let value = try decoder.decode(DecodedV1.self, from: body)
                notification = Notification(
                    id: id,
                    key: key,
                    schema: schema,
                    notificationType: value.notificationType,
                    productID: value.autoRenewProductId
                )
            default:
                // A major this consumer does not know yet (Docs/contract/README.md, compatibility policy).
                logger.notice("skipping an event of an unknown schema", metadata: ["ce_dataschema": "\(schema)"])
                return
            }
        } catch {
            logger.error("skipping an event that does not match its schema", metadata: ["ce_id": "\(id)"])
            return
        }
        // Deduplicated after the schema switch: an event published in two majors has one ce_id.
        guard !seen.contains(id) else { return }
        try await handler(notification)
        seen.insert(id)
    }

    /// The latest event per key wins, as compaction keeps it: a state published again, or an older state between
    /// two newer ones, is overwritten by the last.
    private func apply(_ message: KafkaMessage) {
        guard let key = message.key.map({ String(buffer: $0) }) else { return }
        let schema = message.headers.first(named: "ce_dataschema") ?? ""
        guard schema == Self.subscriptionState else {
            logger.notice("skipping a state of an unknown schema", metadata: ["ce_dataschema": "\(schema)"])
            return
        }
        do {
            let value = Data(message.value.readableBytesView)
            tables[message.topicPartition, default: [:]][key] = try decoder.decode(Subscription.self, from: value)
        } catch {
            logger.error("skipping a state that does not match its schema", metadata: ["key": "\(key)"])
        }
    }

    /// The members of decoded-v2 values this application reads.
    private struct DecodedV2: Decodable {
        struct Payload: Decodable { var notificationType: String }
        struct TransactionInfo: Decodable { var productId: String? }
        var payload: Payload
        var transactionInfo: TransactionInfo?
    }

    /// The members of decoded-v1 values this application reads.
    private struct DecodedV1: Decodable {
        var notificationType: String
        var autoRenewProductId: String?
    }

    /// The last `capacity` ids inserted.
    struct RecentIDs {
        let capacity: Int
        private var ids: Set<String> = []
        private var order: [String] = []
        private var oldest = 0

        init(capacity: Int) { self.capacity = capacity }

        func contains(_ id: String) -> Bool { ids.contains(id) }

        mutating func insert(_ id: String) {
            guard ids.insert(id).inserted else { return }
            if order.count < capacity {
                order.append(id)
            } else {
                ids.remove(order[oldest])
                order[oldest] = id
                oldest = (oldest + 1) % capacity
            }
        }
    }
}
