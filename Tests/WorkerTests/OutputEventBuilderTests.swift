import AppStoreTestSupport
import KafkaClient
import NIOCore
import NotificationStore
import PipelineContract
import Testing

@testable import Worker

@Suite("Output events built once: the same bytes from the batch just written and from the table", .tags(.store))
struct OutputEventBuilderTests {
    /// What a producer message sends, comparable.
    struct Sent: Equatable, CustomStringConvertible {
        var topic: String
        var key: ByteBuffer?
        var value: ByteBuffer
        var headers: [KafkaHeader]
        var partition: Int32?

        init(_ message: KafkaProducerMessage) {
            (topic, key, value, headers, partition) = (
                message.topic, message.key, message.value, message.headers, message.partition
            )
        }

        func header(_ name: String) -> String? {
            headers.first { $0.key == name }?.value.map { String(buffer: $0) }
        }

        var description: String {
            "\(topic) \(headers.map { "\($0.key)=\($0.value.map { String(buffer: $0) } ?? "-")" })"
        }
    }

    @Test(
        """
        each decoded and state event built from the write's rows equals the one built from the outbox table and, for \
        states, from the subscription read again: every valid V2 and V1 fixture
        """
    )
    func memoryAndTable() async throws {
        let cases =
            Fixtures.v2Cases.filter { $0.kind == "valid" }.map { (2, $0) }
            + Fixtures.v1Cases.filter { $0.kind == "valid" }.map { (1, $0) }
        let messages = cases.enumerated().map { index, item in
            RawBatchVerifierTests.message(item.1.body, offset: Int64(index), version: item.0)
        }
        let batch = try await RawBatchVerifierTests.verifier().batch(for: messages)
        let topics = OutputTopics()
        try await GroupCommitWriterTests.withStore { store, _, _ in
            let written = try await store.write(batch)
            let fromMemory = try #require(written.outboxMessages, "the batch's events are made in memory")
            let fromTable = try await store.pendingOutbox(
                source: KafkaTopicPartition(topic: PipelineTopics.raw, partition: 3),
                limit: 10_000
            )
            #expect(fromMemory.map(\.id) == fromTable.map(\.id))
            let keys = fromMemory.filter { $0.stream == .subscriptionState }.compactMap(\.key)
            let current = try await store.subscriptionStates(keys)

            // The notification format of each decoded event's id, to tell V1 states from V2 ones.
            var format: [String: String] = [:]
            var compared: Set<String> = []
            for (memory, table) in zip(fromMemory, fromTable) {
                let built = try #require(memory.outputEvent(topics: topics).map(Sent.init))
                #expect(table.outputEvent(topics: topics).map(Sent.init) == built, "outbox row \(memory.id)")
                let id = try #require(built.header(OutputEvent.CloudEventsHeader.id))
                switch memory.payload {
                case .decoded:
                    let version = try #require(built.header(OutputEvent.CloudEventsHeader.notificationVersion))
                    format[id] = version
                    compared.insert("decoded V\(version)")
                case .subscriptionState:
                    let key = try #require(memory.key)
                    let state = try #require(current[key])
                    #expect(Sent(state.outputEvent(topic: topics.subscriptionState)) == built, "\(key)")
                    compared.insert("state V\(format[id] ?? "?")")
                default:
                    Issue.record("a row of stream \(memory.stream) in a batch of valid notifications")
                }
            }
            #expect(compared == ["decoded V1", "decoded V2", "state V1", "state V2"])
        }
    }
}
