import KafkaClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A notification body as the worker consumed it from the raw topic, with what the ingress recorded about it.
package struct RawNotification: Sendable, Hashable {
    /// The exact HTTP body Apple posted.
    package var body: [UInt8]
    /// The Kafka message key (the partition key the ingress chose), published again with dead letters.
    package var key: String?
    /// The Kafka message headers (version, route environment, app, request id...), kept with rejected
    /// notifications so a replay can reproduce the original message.
    package var headers: [String: String]
    /// When the ingress received the body.
    package var receivedAt: Date
    /// Where in Kafka it was read from.
    package var source: KafkaTopicPartitionOffset
    /// The trace it arrived in (its `traceparent` and `tracestate` headers, when valid): kept with its outbox rows.
    package var traceContext: TraceContext?

    /// Creates a raw notification.
    package init(
        body: [UInt8],
        key: String? = nil,
        headers: [String: String] = [:],
        receivedAt: Date,
        source: KafkaTopicPartitionOffset,
        traceContext: TraceContext? = nil
    ) {
        self.body = body
        self.key = key
        self.headers = headers
        self.receivedAt = receivedAt
        self.source = source
        self.traceContext = traceContext
    }
}
