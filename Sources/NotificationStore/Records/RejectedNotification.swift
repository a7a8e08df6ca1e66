import KafkaClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row of `rejected_notifications`: a consumed body the worker could not accept, kept to be replayed.
package struct RejectedNotification: Sendable, Hashable {
    /// The row's id.
    package var id: Int64
    /// Why it was rejected: Apple's verification status or one of the pipeline's own (Docs/worker.md).
    package var status: String
    /// The rejection's detail.
    package var reason: String
    /// The body as consumed (a V1 body with its shared secret redacted).
    package var body: [UInt8]
    /// The raw-topic headers it was consumed with.
    package var headers: [String: String]
    /// When the pipeline received it.
    package var receivedAt: Date
    /// Where it was consumed from.
    package var source: KafkaTopicPartitionOffset
    /// When `asnp replay rejected` last put it back on the raw topic, if ever.
    package var replayedAt: Date?

    /// Creates a row value.
    package init(
        id: Int64,
        status: String,
        reason: String,
        body: [UInt8],
        headers: [String: String],
        receivedAt: Date,
        source: KafkaTopicPartitionOffset,
        replayedAt: Date?
    ) {
        self.id = id
        self.status = status
        self.reason = reason
        self.body = body
        self.headers = headers
        self.receivedAt = receivedAt
        self.source = source
        self.replayedAt = replayedAt
    }
}

/// Which rejected notifications to read (all conditions must hold).
package struct RejectedNotificationFilter: Sendable, Hashable {
    /// Only these statuses; empty: any.
    package var statuses: [String] = []
    /// Only these row ids; empty: any.
    package var ids: [Int64] = []
    /// Received at or after.
    package var receivedSince: Date?
    /// Received before.
    package var receivedBefore: Date?
    /// Also rows already replayed, and rows of bodies a replay brought and that were rejected again. Without it
    /// each body is replayed once: a forged body is not sent round again by every replay.
    package var includeReplayed = false

    /// Every row not yet replayed that no replay brought.
    package init() {}
}
