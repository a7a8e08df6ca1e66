import AppStoreModels

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What one call to ``NotificationStore/write(_:)`` stores, in one transaction: verified notifications and
/// rejected bodies together, in the order they were consumed.
package struct NotificationBatch: Sendable {
    /// One consumed body and the verifier's verdict on it.
    package struct Entry: Sendable {
        /// The body and where it came from.
        package var raw: RawNotification
        /// Verified and decoded, or rejected.
        package var verdict: Verdict

        /// Creates an entry.
        package init(raw: RawNotification, verdict: Verdict) {
            self.raw = raw
            self.verdict = verdict
        }

        /// The `notification_uuid` a verified entry is stored under (``BatchWriteResult/storedNotifications``): V2's
        /// own, V1's derived from its body. Nil when rejected, or a V2 without one (stored as `UNSTORABLE`).
        package var notificationUUID: UUID? {
            switch verdict {
            case .verified(.v2(let notification)):
                notification.payload.notificationUUID.flatMap(UUID.init(uuidString:))
            case .verified(.v1):
                UUID.derived(fromSHA256Of: raw.body)
            case .rejected:
                nil
            }
        }
    }

    /// The verifier's verdict on a body.
    package enum Verdict: Sendable {
        /// Verified; stored in `notifications` (and `subscriptions`) unless already there.
        case verified(DecodedNotification)
        /// Rejected; stored in `rejected_notifications` with the status (Apple's vocabulary) and reason.
        case rejected(status: String, reason: String)
    }

    /// The entries, in consumption order.
    package var entries: [Entry]
    /// The partitions the entries come from, each with its writer's claim: the batch is stored only while each claim
    /// is its partition's latest (a worker's batches). Empty: stored whoever owns the partitions (tools, tests).
    package var fences: [PartitionFence]

    /// Creates a batch.
    package init(entries: [Entry] = [], fences: [PartitionFence] = []) {
        self.entries = entries
        self.fences = fences
    }

    /// Adds a verified notification.
    package mutating func appendVerified(_ notification: DecodedNotification, raw: RawNotification) {
        entries.append(Entry(raw: raw, verdict: .verified(notification)))
    }

    /// Adds a rejected body.
    package mutating func appendRejected(status: String, reason: String, raw: RawNotification) {
        entries.append(Entry(raw: raw, verdict: .rejected(status: status, reason: reason)))
    }
}
