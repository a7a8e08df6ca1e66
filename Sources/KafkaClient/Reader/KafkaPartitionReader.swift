import CRDKafka
import Logging
import NIOCore

/// Reads a range of offsets of one partition outside any consumer group, committing nothing: for tools that re-read
/// what a topic holds (`asnp replay offsets`, `asnp tail`). Reads may follow one another on one reader in any order
/// of partitions and offsets; reads called at once take turns, since each holds the handle's one assignment.
package final class KafkaPartitionReader: Sendable {
    private let client: RDKafkaClient
    private let executor = BlockingExecutor(label: "asnp.kafka.reader")
    private let turns = AsyncTurnstile()

    static let managedProperties: Set<String> = [
        "group.id", "enable.auto.commit", "enable.auto.offset.store", "enable.partition.eof", "auto.offset.reset",
        "fetch.wait.max.ms",
    ]

    /// Creates the reader; fails with ``KafkaError/Code/invalidConfiguration`` for invalid settings.
    package init(cluster: KafkaClusterConfiguration, logger: Logger) throws(KafkaError) {
        var properties = try cluster.properties(managed: Self.managedProperties)
        // librdkafka wants a group id for any consumer handle; this one never joins it or commits to it.
        properties["group.id"] = "asnp-partition-reader"
        properties["enable.auto.commit"] = "false"
        properties["enable.auto.offset.store"] = "false"
        properties["enable.partition.eof"] = "true"
        // An offset the partition no longer holds is an error to report, not a reason to read something else.
        properties["auto.offset.reset"] = "error"
        // A broker holds a fetch at the partition's end this long, and the next read's partition is fetched only
        // after it: at the default 500 ms every read of a partition read to its end took half a second.
        properties["fetch.wait.max.ms"] = "50"
        client = try RDKafkaClient.make(
            kind: .consumer,
            properties: properties,
            callbacks: RDKafkaCallbacks(logger: logger, oauth: cluster.oauth)
        )
    }

    /// Hands the messages of `partition` in `offsets` to `body`, in offset order, up to `chunk` at a time. Stops at
    /// the range's end or at the partition's end (offsets not produced yet are not waited for).
    ///
    /// Throws ``KafkaError/Code/refused`` when the range starts outside the offsets the partition holds (deleted by
    /// retention, or not produced yet),
    /// ``KafkaError/Code/timedOut`` when no broker answers for `timeout`.
    package func read(
        _ partition: KafkaTopicPartition,
        offsets: Range<Int64>,
        chunk: Int = 500,
        timeout: Duration = .seconds(30),
        _ body: ([KafkaMessage]) async throws -> Void
    ) async throws {
        guard !offsets.isEmpty else { return }
        try await turns.withTurn {
            try await read(partition, offsets: offsets, chunk: chunk, timeout: timeout, inTurn: body)
        }
    }

    private func read(
        _ partition: KafkaTopicPartition,
        offsets: Range<Int64>,
        chunk: Int,
        timeout: Duration,
        inTurn body: ([KafkaMessage]) async throws -> Void
    ) async throws {
        let client = client
        try await executor.run { () throws(KafkaError) in
            let result = RDKafkaTopicPartitionList.with(offsets: [
                KafkaTopicPartitionOffset(partition, offset: offsets.lowerBound)
            ]) {
                rd_kafka_assign(client.handle, $0)
            }
            if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw .rdKafka(result, "could not read \(partition)") }
        }
        do {
            var next = offsets.lowerBound
            while next < offsets.upperBound {
                let wanted = min(chunk, Int(offsets.upperBound - next))
                let (messages, atEnd) = try await executor.run { () throws(KafkaError) in
                    try Self.poll(
                        client,
                        partition,
                        maxMessages: wanted,
                        timeout: timeout,
                        upperBound: offsets.upperBound
                    )
                }
                if let last = messages.last {
                    try await body(messages)
                    next = last.offset + 1
                }
                if atEnd { break }
            }
        } catch {
            await unassign()
            throw error
        }
        await unassign()
    }

    private func unassign() async {
        let client = client
        await executor.run { _ = rd_kafka_assign(client.handle, nil) }
    }

    /// Whether `message` (or event) is of `partition`. librdkafka's version barrier drops what a previous assignment
    /// fetched, but should a message or end-of-partition event of the partition read before still come out of the
    /// queue, taken as this partition's it would end the read early or move the caller's next offset past messages
    /// never read. A client-wide error names no partition.
    private static func message(
        _ message: UnsafeMutablePointer<rd_kafka_message_t>,
        isOf partition: KafkaTopicPartition
    )
        -> Bool
    {
        guard let topic = message.pointee.rkt else { return true }
        return message.pointee.partition == partition.partition
            && String(cString: rd_kafka_topic_name(topic)) == partition.topic
    }

    /// On the executor: up to `maxMessages` messages below `upperBound`, and whether the partition's end was reached.
    private static func poll(
        _ client: RDKafkaClient,
        _ partition: KafkaTopicPartition,
        maxMessages: Int,
        timeout: Duration,
        upperBound: Int64
    ) throws(KafkaError) -> ([KafkaMessage], Bool) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var taken: [UnsafeMutablePointer<rd_kafka_message_t>] = []
        defer { taken.forEach { rd_kafka_message_destroy($0) } }
        var atEnd = false
        while taken.count < maxMessages, !atEnd {
            guard let message = rd_kafka_consumer_poll(client.handle, taken.isEmpty ? 200 : 0) else {
                if !taken.isEmpty { break }
                if ContinuousClock.now >= deadline {
                    throw KafkaError(code: .timedOut, reason: "no message of \(partition) within \(timeout)")
                }
                continue
            }
            guard Self.message(message, isOf: partition) else {
                rd_kafka_message_destroy(message)
                continue
            }
            switch message.pointee.err {
            case RD_KAFKA_RESP_ERR_NO_ERROR:
                if message.pointee.offset >= upperBound {
                    rd_kafka_message_destroy(message)
                    atEnd = true
                } else {
                    taken.append(message)
                    atEnd = message.pointee.offset + 1 >= upperBound
                }
            case RD_KAFKA_RESP_ERR__PARTITION_EOF:
                rd_kafka_message_destroy(message)
                atEnd = true
            case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
                let offset = message.pointee.offset
                rd_kafka_message_destroy(message)
                var low: Int64 = -1
                var high: Int64 = -1
                _ = rd_kafka_query_watermark_offsets(
                    client.handle,
                    partition.topic,
                    partition.partition,
                    &low,
                    &high,
                    5_000
                )
                throw KafkaError(
                    code: .refused,
                    reason: "\(partition) does not hold offset \(offset) (it holds \(low)..<\(high))"
                )
            case let error:
                rd_kafka_message_destroy(message)
                if ContinuousClock.now >= deadline {
                    throw KafkaError.rdKafka(error, "could not read \(partition)")
                }
            }
        }
        var byteCount = 0
        for message in taken { byteCount += RDKafkaMessage.byteCount(of: message) }
        var slab = ByteBufferAllocator().buffer(capacity: byteCount)
        let copied = taken.map { RDKafkaMessage.copy($0, topic: partition.topic, into: &slab) }
        return (copied.map { $0.message(in: slab) }, atEnd)
    }
}
