import KafkaClient
import NotificationBodies
import NotificationSchema

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A batch turned into rows: verified notifications that can be stored, and rejected bodies (including verified
/// notifications that cannot be stored as such).
package struct PreparedBatch: Sendable {
    package var notifications: [NotificationRow] = []
    /// The batch's entries, whose ordinals the rows carry: a notification the server refuses is stored as rejected
    /// after all, from its consumed body.
    private let entries: [NotificationBatch.Entry]
    var rejected: [RejectedRow] = []
    /// Rejected entries dropped because the same Kafka coordinates appear earlier in the batch.
    var repeatedRejections = 0
    var unstorable = 0

    package init(_ batch: NotificationBatch) {
        entries = batch.entries
        var rejectedSources = Set<KafkaTopicPartitionOffset>()
        for (index, entry) in batch.entries.enumerated() {
            let ordinal = Int32(index)
            switch entry.verdict {
            case .verified(let notification):
                do throws(UnstorableNotification) {
                    notifications.append(
                        try NotificationRow(ordinal: ordinal, notification: notification, raw: entry.raw)
                    )
                } catch {
                    unstorable += 1
                    appendRejected(
                        RejectedRow(
                            ordinal: ordinal,
                            status: RejectedRow.unstorableStatus,
                            reason: error.reason,
                            raw: entry.raw
                        ),
                        seen: &rejectedSources
                    )
                }
            case .rejected(let status, let reason):
                appendRejected(
                    RejectedRow(ordinal: ordinal, status: status, reason: reason, raw: entry.raw),
                    seen: &rejectedSources
                )
            }
        }
    }

    /// The consumed body of the row with `ordinal`.
    func rawNotification(ordinal: Int32) -> RawNotification {
        entries[Int(ordinal)].raw
    }

    /// The JWS headers the notifications' packed bodies refer to, each once (rejected bodies are kept whole).
    var headers: [JWSHeaderDigest: [UInt8]] {
        var headers: [JWSHeaderDigest: [UInt8]] = [:]
        for row in notifications { headers.merge(row.body.headers) { first, _ in first } }
        return headers
    }

    /// The UTC months (each as its first instant) the notifications were received in, which name their bodies'
    /// partitions; rejected bodies are stored apart, in no partition.
    var bodyMonths: Set<Date> {
        Set(
            Set(notifications.map { $0.receivedAt.flooredToDay }).map { day in
                BodyPartitionMonths.start(of: Date(timeIntervalSince1970: Double(day) / 1_000), monthsBefore: 0)
            }
        )
    }

    private mutating func appendRejected(_ row: RejectedRow, seen: inout Set<KafkaTopicPartitionOffset>) {
        if seen.insert(row.source).inserted {
            rejected.append(row)
        } else {
            repeatedRejections += 1
        }
    }
}

extension Int64 {
    /// Milliseconds since 1970 floored to the start of their UTC day: before 1970 too, where dividing rounds toward
    /// zero, to the day after.
    var flooredToDay: Int64 {
        let millisecondsADay: Int64 = 86_400_000
        let remainder = self % millisecondsADay
        return self - (remainder < 0 ? remainder + millisecondsADay : remainder)
    }
}
