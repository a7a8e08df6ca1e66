#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row of `rejected_notifications`: a consumed body the worker could not accept, kept to be replayed.
public struct RejectedNotification: Sendable, Hashable {
    /// The row's id.
    public var id: Int64
    /// Why it was rejected: Apple's verification status or one of the pipeline's own (Docs/worker.md).
    public var status: String
    /// The rejection's detail.
    public var reason: String
    /// The body as consumed (a V1 body with its shared secret redacted).
    public var body: [UInt8]
    /// The raw-topic headers it was consumed with.
    public var headers: [String: String]
    /// When the pipeline received it.
    public var receivedAt: Date
    /// Where it was consumed from.
    public var source: KafkaCoordinates
    /// When `asnp replay rejected` last put it back on the raw topic, if ever.
    public var replayedAt: Date?

    /// Creates a row value.
    public init(
        id: Int64,
        status: String,
        reason: String,
        body: [UInt8],
        headers: [String: String],
        receivedAt: Date,
        source: KafkaCoordinates,
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
public struct RejectedNotificationFilter: Sendable, Hashable {
    /// Only these statuses; empty: any.
    public var statuses: [String] = []
    /// Only these row ids; empty: any.
    public var ids: [Int64] = []
    /// Received at or after.
    public var receivedSince: Date?
    /// Received before.
    public var receivedBefore: Date?
    /// Also rows already replayed.
    public var includeReplayed = false

    /// Every row not yet replayed.
    public init() {}
}
