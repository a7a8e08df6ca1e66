import AppStoreModels
import AppStoreTestSupport
import Foundation
import KafkaClient
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import PipelineReplay
import PipelineTestSupport
import StoreTestSupport
import Testing

@Suite(
    "Replay onto the raw topic: rejected rows and offset ranges, with a real PostgreSQL and the Kafka mock",
    .tags(.pipeline)
)
struct ReplayTests {
    static let topic = PipelineRig.rawTopic
    static let logger = Logger.test("test.replay")

    static func headers(version: Int, source: RawNotificationHeaders.Source = .ingress) -> RawNotificationHeaders {
        RawNotificationHeaders(
            version: version,
            environment: .sandbox,
            app: "com.example.notes",
            receivedAt: Date(timeIntervalSince1970: 1_767_225_600),
            requestID: "request-\(version)",
            source: source
        )
    }

    /// A rejected row as the worker stores it, consumed from `offset` of the raw topic.
    static func rejected(body: String, headers: RawNotificationHeaders?, offset: Int64) -> NotificationBatch.Entry {
        NotificationBatch.Entry(
            raw: RawNotification(
                body: Array(body.utf8),
                key: "key-\(offset)",
                headers: Dictionary(uniqueKeysWithValues: (headers?.fields ?? []).map { ($0.name, $0.value) }),
                receivedAt: Date(timeIntervalSince1970: 1_767_225_600 + Double(offset)),
                source: KafkaTopicPartitionOffset(topic: topic, partition: 0, offset: offset)
            ),
            verdict: .rejected(status: "INVALID_CHAIN", reason: "test")
        )
    }

    /// The messages the raw topic's partition 0 holds after the first `offset`.
    static func messages(from offset: Int, reader: KafkaPartitionReader) async throws -> [KafkaMessage] {
        var messages: [KafkaMessage] = []
        try await reader.read(KafkaTopicPartition(topic: topic, partition: 0), offsets: 0..<100) { messages += $0 }
        return Array(messages.dropFirst(offset))
    }

    @Test(
        """
        a V2 row goes with its headers, a V1 row is read back from the raw topic, one the topic no longer holds and one \
        without headers are skipped; a dry run sends nothing; the rows sent are marked and not sent again
        """
    )
    func rejectedRows() async throws {
        try await PipelineRig.run(label: "test.replay", rawPartitions: 1) { rig in
            let cluster = rig.mock.clusterConfiguration
            let reader = try KafkaPartitionReader(cluster: cluster, logger: rig.logger)
            let store = rig.store
            let version1 = #"{"notification_type":"DID_RENEW","password":"secret"}"#
            let version2 = #"{"signedPayload":"a.b.c"}"#

            try await RawTopicReplay.with(cluster: cluster, topic: Self.topic, logger: rig.logger) { replay in
                // The V1 body as Apple sent it, at offset 0: what the worker consumed before redacting the password.
                let original = Self.headers(version: 1).message(body: ByteBuffer(string: version1), topic: Self.topic)
                let (acknowledged, failure) = await replay.send([original])
                #expect(acknowledged == [0] && failure == nil)

                _ = try await store.write(
                    NotificationBatch(entries: [
                        Self.rejected(body: version2, headers: Self.headers(version: 2), offset: 10),
                        Self.rejected(body: "redacted", headers: Self.headers(version: 1), offset: 0),
                        Self.rejected(body: "redacted", headers: Self.headers(version: 1), offset: 50),
                        Self.rejected(body: "{}", headers: nil, offset: 11),
                    ])
                )
                let filter = RejectedNotificationFilter()

                let dryRun = try await RejectedReplay(replay: replay, reader: reader, store: store, dryRun: true)
                    .run(filter)
                #expect(dryRun.replayed == ["INVALID_CHAIN": 2])
                #expect(dryRun.version1Gone == [KafkaTopicPartitionOffset(topic: Self.topic, partition: 0, offset: 50)])
                #expect(dryRun.withoutHeaders == 1)
                #expect(try await Self.messages(from: 1, reader: reader).isEmpty)

                let summary = try await RejectedReplay(replay: replay, reader: reader, store: store, dryRun: false)
                    .run(filter)
                #expect(summary.replayed == ["INVALID_CHAIN": 2])
                #expect(
                    summary.report(topic: Self.topic, dryRun: false).hasPrefix(
                        "replayed 2 rejected notification(s) to \(Self.topic): INVALID_CHAIN 2\nskipped 1 V1 notification(s)"
                    )
                )
                let sent = try await Self.messages(from: 1, reader: reader)
                #expect(sent.map { String(buffer: $0.value) }.sorted() == [version2, version1].sorted())
                for message in sent {
                    #expect(message.headers.first(named: RawNotificationHeaders.Name.source) == "replay")
                }

                let again = try await RejectedReplay(replay: replay, reader: reader, store: store, dryRun: false)
                    .run(filter)
                #expect(again.replayed.isEmpty)
            }
        }
    }

    @Test(
        """
        an offset range is produced again with its keys and headers; a range the partition does not hold is refused; \
        a refusal not retried stops the replay with how far it got
        """
    )
    func offsets() async throws {
        let mock = try KafkaMockCluster(brokers: 1, logger: Self.logger)
        try mock.createTopic(Self.topic, partitions: 1)
        let cluster = mock.clusterConfiguration
        let reader = try KafkaPartitionReader(cluster: cluster, logger: Self.logger)
        let partition = KafkaTopicPartition(topic: Self.topic, partition: 0)
        try await RawTopicReplay.with(cluster: cluster, topic: Self.topic, logger: Self.logger) { replay in
            let body = #"{"signedPayload":"a.b.c"}"#
            let original = Self.headers(version: 2).message(body: ByteBuffer(string: body), topic: Self.topic)
            #expect(await replay.send([original]).acknowledged == [0])

            #expect(try await replay.replay(partition, offsets: 0..<1, reader: reader) == 1)
            let copy = try #require(try await Self.messages(from: 1, reader: reader).first)
            #expect(String(buffer: copy.value) == body)
            #expect(copy.key == original.key)
            #expect(copy.headers.first(named: RawNotificationHeaders.Name.source) == "replay")
            #expect(copy.headers.first(named: RawNotificationHeaders.Name.requestID) == "request-2")

            await #expect(throws: KafkaError.self) {
                _ = try await replay.replay(partition, offsets: 40..<41, reader: reader)
            }

            // A refusal the producer does not retry stops the replay, saying how far it got.
            mock.injectErrors([.messageTooLarge], into: .produce)
            let interrupted = await #expect(throws: ReplayInterrupted<Int>.self) {
                _ = try await replay.replay(partition, offsets: 0..<1, reader: reader)
            }
            #expect(interrupted?.progress == 0)
            #expect(interrupted?.failure.isRetriable == false)
        }
    }
}
