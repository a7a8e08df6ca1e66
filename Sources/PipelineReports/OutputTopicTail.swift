import KafkaClient

/// Reads an output topic outside any consumer group (commits nothing), in order per partition: `asnp tail`.
package struct OutputTopicTail {
    package let topic: String
    package let admin: KafkaAdminClient
    package let reader: KafkaPartitionReader
    /// Whether to read on after every partition's end, until cancelled.
    package let follow: Bool

    package init(topic: String, admin: KafkaAdminClient, reader: KafkaPartitionReader, follow: Bool) {
        self.topic = topic
        self.admin = admin
        self.reader = reader
        self.follow = follow
    }

    /// Where each partition ends now: the start of a tail of only new events.
    package func ends() async throws -> [KafkaTopicPartition: Int64] {
        try await admin.watermarks(of: topic).mapValues(\.high)
    }

    /// Hands every message of the topic from `start` (per partition; the beginning for the others) to `body`, in
    /// order per partition, to the end each partition has when read; with `follow`, again and again.
    package func read(
        from start: [KafkaTopicPartition: Int64],
        _ body: ([KafkaMessage]) throws -> Void
    ) async throws {
        var next = start
        while true {
            var readAny = false
            let watermarks = try await admin.watermarks(of: topic).sorted { $0.key.partition < $1.key.partition }
            for (partition, marks) in watermarks {
                let first = max(next[partition] ?? marks.low, marks.low)
                guard first < marks.high else { continue }
                // The next read goes on after the last message read: a read that ended early misses nothing.
                try await reader.read(partition, offsets: first..<marks.high) { messages in
                    try body(messages)
                    if let last = messages.last {
                        next[partition] = last.offset + 1
                        readAny = true
                    }
                }
            }
            guard follow else { return }
            if !readAny { try await Task.sleep(for: .milliseconds(500)) }
        }
    }
}
