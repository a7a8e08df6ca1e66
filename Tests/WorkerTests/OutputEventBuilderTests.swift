import AppStoreTestSupport
import Foundation
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
        // Each in a trace of its own, every other one with vendors' state: kept by the outbox either way.
        func traceparent(_ index: Int) -> String {
            "00-\(String(format: "%032x", index + 1))-\(String(format: "%016x", index + 7))-01"
        }
        let messages = cases.enumerated().map { index, item in
            var message = RawBatchVerifierTests.message(item.1.body, offset: Int64(index), version: item.0)
            message.headers.append(KafkaHeader(key: TraceContextHeaders.traceparent, string: traceparent(index)))
            if index.isMultiple(of: 2) {
                message.headers.append(KafkaHeader(key: TraceContextHeaders.tracestate, string: "asnp=\(index)"))
            }
            return message
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
                let built = try #require(memory.outputEvent(topics: topics, trace: memory.trace).map(Sent.init))
                #expect(
                    table.outputEvent(topics: topics, trace: table.trace).map(Sent.init) == built,
                    "outbox row \(memory.id)"
                )
                let id = try #require(built.header(OutputEvent.CloudEventsHeader.id))
                // The trace its notification arrived in, under both names.
                let parent = try #require(built.header(TraceContextHeaders.traceparent), "\(built)")
                #expect(built.header(OutputEvent.CloudEventsHeader.traceparent) == parent)
                #expect(built.header(OutputEvent.CloudEventsHeader.tracestate) == built.header("tracestate"))
                #expect(messages.contains { $0.headers.first { $0.key == "traceparent" }?.stringValue == parent })
                switch memory.payload {
                case .decoded:
                    let version = try #require(built.header(OutputEvent.CloudEventsHeader.notificationVersion))
                    format[id] = version
                    compared.insert("decoded V\(version)")
                case .subscriptionState:
                    let key = try #require(memory.key)
                    let state = try #require(current[key])
                    #expect(
                        Sent(state.outputEvent(topic: topics.subscriptionState, trace: memory.trace)) == built,
                        "\(key)"
                    )
                    compared.insert("state V\(format[id] ?? "?")")
                default:
                    Issue.record("a row of stream \(memory.stream) in a batch of valid notifications")
                }
            }
            #expect(compared == ["decoded V1", "decoded V2", "state V1", "state V2"])
        }
    }
}
