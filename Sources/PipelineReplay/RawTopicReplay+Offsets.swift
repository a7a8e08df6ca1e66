import KafkaClient

extension RawTopicReplay {
    /// Produces the messages at `offsets` of `source` again with their keys and headers (`asnp-source: replay`);
    /// returns how many the cluster acknowledged. Throws ``ReplayInterrupted`` with the count so far at the first
    /// message not acknowledged, and the reader's error when `source` no longer holds the first offset.
    package func replay(
        _ source: KafkaTopicPartition,
        offsets: Range<Int64>,
        reader: KafkaPartitionReader
    ) async throws -> Int {
        var replayed = 0
        try await reader.read(source, offsets: offsets) { messages in
            let (acknowledged, failure) = await send(messages.map(message(copying:)))
            replayed += acknowledged.count
            if let failure { throw ReplayInterrupted(progress: replayed, failure: failure) }
        }
        return replayed
    }
}
