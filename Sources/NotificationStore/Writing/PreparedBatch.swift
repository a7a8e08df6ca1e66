import KafkaClient

/// A batch turned into rows: verified notifications that can be stored, and rejected bodies (including verified
/// notifications that cannot be stored as such).
package struct PreparedBatch: Sendable {
    package var notifications: [NotificationRow] = []
    /// The consumed bodies of ``notifications`` by ordinal, in case the server refuses one and it must be stored
    /// as rejected after all.
    var rawNotifications: [Int32: RawNotification] = [:]
    var rejected: [RejectedRow] = []
    /// Rejected entries dropped because the same Kafka coordinates appear earlier in the batch.
    var repeatedRejections = 0
    var unstorable = 0

    package init(_ batch: NotificationBatch) {
        var rejectedSources = Set<KafkaTopicPartitionOffset>()
        for (index, entry) in batch.entries.enumerated() {
            let ordinal = Int32(index)
            switch entry.verdict {
            case .verified(let notification):
                do throws(UnstorableNotification) {
                    notifications.append(
                        try NotificationRow(ordinal: ordinal, notification: notification, raw: entry.raw)
                    )
                    rawNotifications[ordinal] = entry.raw
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

    private mutating func appendRejected(_ row: RejectedRow, seen: inout Set<KafkaTopicPartitionOffset>) {
        if seen.insert(row.source).inserted {
            rejected.append(row)
        } else {
            repeatedRejections += 1
        }
    }
}
