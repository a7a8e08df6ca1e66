import KafkaClient
import NotificationStore
import PipelineContract

/// Rejected notifications back onto the raw topic: `asnp replay rejected`.
///
/// V2 bodies go with the headers they came with. V1 bodies are stored with the shared secret redacted, so they are
/// read back from the raw topic at the coordinates they were consumed from, while it still holds them. A row is
/// marked replayed once the cluster acknowledged its message.
package struct RejectedReplay {
    package let replay: RawTopicReplay
    package let reader: KafkaPartitionReader
    package let store: NotificationStore
    /// Only count what would be replayed.
    package let dryRun: Bool

    package init(replay: RawTopicReplay, reader: KafkaPartitionReader, store: NotificationStore, dryRun: Bool) {
        self.replay = replay
        self.reader = reader
        self.store = store
        self.dryRun = dryRun
    }

    /// Replays every row `filter` selects, a page at a time. Throws ``ReplayInterrupted`` with what was done at the
    /// first message not acknowledged (the rows acknowledged before it are marked).
    package func run(_ filter: RejectedNotificationFilter) async throws -> Summary {
        var summary = Summary()
        var lastID: Int64 = 0
        while true {
            let rows = try await store.rejectedNotifications(
                filter,
                replayMark: (RawNotificationHeaders.Name.source, RawNotificationHeaders.Source.replay.rawValue),
                afterID: lastID,
                limit: 500
            )
            guard let last = rows.last else { break }
            lastID = last.id
            try await replayPage(rows, summary: &summary)
        }
        return summary
    }

    private func replayPage(_ rows: [RejectedNotification], summary: inout Summary) async throws {
        var replayable: [(row: RejectedNotification, message: KafkaProducerMessage)] = []
        for row in rows {
            guard let headers = try? RawNotificationHeaders(fields: row.headers) else {
                summary.withoutHeaders += 1
                continue
            }
            guard headers.version == 2 else {
                // The stored V1 body has its password redacted: the raw topic has it as Apple sent it.
                if let original = try await consumedMessage(at: row.source) {
                    replayable.append((row, replay.message(copying: original)))
                } else {
                    summary.version1Gone.append(row.source)
                }
                continue
            }
            replayable.append((row, replay.message(body: row.body, headers: headers)))
        }
        if dryRun {
            for entry in replayable { summary.replayed[entry.row.status, default: 0] += 1 }
            return
        }
        let (acknowledged, failure) = await replay.send(replayable.map(\.message))
        try await store.markReplayed(acknowledged.map { replayable[$0].row.id })
        for index in acknowledged { summary.replayed[replayable[index].row.status, default: 0] += 1 }
        if let failure { throw ReplayInterrupted(progress: summary, failure: failure) }
    }

    /// The raw-topic message at `source`, or nil when the partition no longer holds it (retention).
    private func consumedMessage(at source: KafkaTopicPartitionOffset) async throws -> KafkaMessage? {
        var found: KafkaMessage?
        do {
            try await reader.read(source.topicPartition, offsets: source.offset..<(source.offset + 1)) { messages in
                found = messages.first { $0.offset == source.offset }
            }
        } catch let error as KafkaError where error.code == .refused {
            return nil
        }
        return found
    }
}
