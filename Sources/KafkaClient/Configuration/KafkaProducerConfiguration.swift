/// Settings of a ``KafkaProducer``.
///
/// The producer is always idempotent with `acks=all` (`enable.idempotence=true`) and one request in flight per
/// broker connection: a message acknowledged to the caller is on every in-sync replica, and librdkafka's retries
/// never duplicate or reorder it within a partition.
package struct KafkaProducerConfiguration: Sendable, Hashable {
    /// The cluster to produce to.
    package var cluster: KafkaClusterConfiguration
    /// How long librdkafka keeps trying to deliver a message (queueing, retries, broker outages) before
    /// ``KafkaProducer/send(_:)`` fails with ``KafkaError/Code/messageTimedOut`` (`message.timeout.ms`). The ingress
    /// wants this well below Apple's patience. Default 10 s.
    package var deliveryTimeout: Duration = .seconds(10)
    /// How long librdkafka waits to fill a batch (`linger.ms`). Default 2 ms: low latency with good batches.
    package var linger: Duration = .milliseconds(2)
    /// Messages queued locally (not yet acknowledged) before ``KafkaProducer/send(_:)`` waits for room
    /// (`queue.buffering.max.messages`). Default 100,000.
    package var maxQueuedMessages = 100_000
    /// Compression of produced batches (`compression.codec`): `none`, `gzip`, `snappy`, `lz4`, `zstd`. Default lz4.
    package var compression = "lz4"
    /// The codec's level (`compression.level`): 0-9 for gzip, 0-12 for lz4 and zstd (librdkafka's range; higher
    /// shrinks more for more CPU). Default nil: the codec's own default (zstd's is 3).
    package var compressionLevel: Int?
    /// The levels librdkafka's `compression.level` takes (gzip uses 0-9 of them).
    package static let compressionLevels = 0...12
    /// How often librdkafka reports what the producer wrote (`statistics.interval.ms`), which
    /// ``KafkaProducer/statistics`` adds up. Default nil: no reports (they cost a JSON document each).
    package var statisticsInterval: Duration?
    /// How long a shutdown waits for queued messages to be acknowledged before failing them. Default 30 s.
    package var shutdownFlushTimeout: Duration = .seconds(30)

    /// A producer configuration for the given cluster, with the defaults above.
    package init(cluster: KafkaClusterConfiguration) {
        self.cluster = cluster
    }

    /// Properties the producer sets for its guarantees; refused in `additionalProperties`.
    static let managedProperties: Set<String> = [
        "enable.idempotence", "acks", "request.required.acks", "max.in.flight.requests.per.connection",
        "message.timeout.ms", "delivery.timeout.ms", "dr_msg_cb", "dr_cb",
    ]

    func properties() throws(KafkaError) -> [String: String] {
        guard deliveryTimeout > .zero, linger >= .zero, shutdownFlushTimeout >= .zero else {
            throw .invalidConfiguration(
                "deliveryTimeout must be positive; linger and shutdownFlushTimeout not negative"
            )
        }
        if let statisticsInterval, statisticsInterval <= .zero {
            throw .invalidConfiguration("statisticsInterval must be positive")
        }
        if let compressionLevel, !Self.compressionLevels.contains(compressionLevel) {
            throw .invalidConfiguration("compressionLevel \(compressionLevel) is not 0-12")
        }
        guard maxQueuedMessages > 0 else { throw .invalidConfiguration("maxQueuedMessages must be positive") }
        var properties = try cluster.properties(managed: Self.managedProperties)
        properties["enable.idempotence"] = "true"
        properties["acks"] = "all"
        // One produce request at a time per broker connection. With several in flight, a failed request is followed
        // by later ones, and librdkafka 2.0.2 takes a later one's success as the acknowledgement of the failed
        // one's messages ("implicitly acked"): sound only if the broker refused the gap, which librdkafka's mock
        // does not, so messages were reported delivered that were never stored (Docs/kafka.md). One in flight has
        // no such cascades (nor the epoch bumps they cause) and measured no slower end to end.
        properties["max.in.flight.requests.per.connection"] = "1"
        properties["message.timeout.ms"] = String(deliveryTimeout.wholeMilliseconds)
        properties["linger.ms"] = properties["linger.ms"] ?? String(linger.wholeMilliseconds)
        properties["queue.buffering.max.messages"] =
            properties["queue.buffering.max.messages"] ?? String(maxQueuedMessages)
        properties["compression.codec"] = properties["compression.codec"] ?? compression
        if let compressionLevel {
            properties["compression.level"] = properties["compression.level"] ?? String(compressionLevel)
        }
        if let statisticsInterval {
            properties["statistics.interval.ms"] =
                properties["statistics.interval.ms"] ?? String(statisticsInterval.wholeMilliseconds)
        }
        // Small produce requests must not wait for the broker's delayed ACK (Nagle): that adds up to 40 ms to an
        // acknowledgement the ingress is waiting for.
        properties["socket.nagle.disable"] = properties["socket.nagle.disable"] ?? "true"
        // Java's partitioner, so keys land on the same partitions as with any JVM producer of the same topic.
        properties["partitioner"] = properties["partitioner"] ?? "murmur2_random"
        return properties
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so a short positive duration never becomes 0 ("no wait" in librdkafka).
    var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        let remainder = attoseconds % 1_000_000_000_000_000
        return Int(clamping: milliseconds + (remainder > 0 ? 1 : 0))
    }
}
