import CRDKafka
import Logging

extension KafkaConsumer {
    /// The offset each of `partitions` hands out next, as far as this member knows: the group's committed offset
    /// right after the partition was assigned, then the one after the last message handed out (or the offset sought
    /// to, ``seek(_:)``). A partition is absent when that is unknown: no offset was committed (it starts from
    /// ``KafkaConsumerConfiguration/startWithoutCommittedOffset``), the committed offsets could not be read, or it
    /// is not owned.
    package func positions(of partitions: some Sequence<KafkaTopicPartition>) -> [KafkaTopicPartition: Int64] {
        expectedOffsets.withLock { expected in
            var positions: [KafkaTopicPartition: Int64] = [:]
            for partition in partitions { positions[partition] = expected.next(partition) }
            return positions
        }
    }

    /// Makes owned partitions hand out messages from these offsets next: messages fetched and not yet handed out are
    /// dropped, and fetched again from there. An offset the partition no longer holds (deleted by retention) goes
    /// on from the oldest one kept, reported as a ``KafkaOffsetGap`` like any other skip. Commits nothing. Throws
    /// ``KafkaError/Code/invalidState`` for a partition this member does not own; a seek librdkafka did not take in
    /// time is tried again, ``seekAttempts`` times in all, before it throws ``KafkaError/Code/timedOut``.
    package func seek(_ offsets: [KafkaTopicPartitionOffset]) async throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        let client = client
        let state = state
        // Bounded like the other calls that wait for librdkafka's threads.
        let timeout = Int32(clamping: min(configuration.sessionTimeout, .seconds(10)).wholeMilliseconds)
        try await executor.run { () throws(KafkaError) in
            let owned = state.withLock { $0.assignment }
            if let unowned = offsets.first(where: { !owned.contains($0.topicPartition) }) {
                throw KafkaError(
                    code: .invalidState,
                    reason: "cannot seek \(unowned.topicPartition): this member does not own it"
                )
            }
            // librdkafka waits that long for its fetchers to take the seek, which a loaded machine or broker can
            // exceed (a restore drill's worker stopped on it under a full test run); the positions are then unknown,
            // and seeking the same offsets again is harmless.
            for attempt in 1...Self.seekAttempts {
                let failure = RDKafkaTopicPartitionList.with(offsets: offsets) { list -> KafkaError? in
                    if let error = rd_kafka_seek_partitions(client.handle, list, timeout) {
                        return .rdKafka(consuming: error, "could not seek partitions")
                    }
                    return RDKafkaTopicPartitionList.firstError(in: list, "could not seek a partition")
                }
                guard let failure else { break }
                guard failure.code == .timedOut, attempt < Self.seekAttempts else { throw failure }
                self.logger.warning(
                    "Seeking timed out; seeking again",
                    metadata: ["kafka.offsets": "\(offsets)", "attempt": "\(attempt)", "error": "\(failure)"]
                )
            }
            // From here on a message past the offset sought is a skip, reported as a gap.
            self.expectedOffsets.withLock { expected in
                expected.assigned(Dictionary(uniqueKeysWithValues: offsets.map { ($0.topicPartition, $0.offset) }))
            }
        }
    }

    /// Seeks of one call that may time out before it throws (each waits at most 10 s, or the session timeout).
    package static let seekAttempts = 6
}
