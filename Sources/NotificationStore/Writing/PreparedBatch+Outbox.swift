import PipelineContract

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PreparedBatch {
    /// The messages of the outbox rows this batch's write returned, from the rows in memory: reading them back
    /// (the `decoded` JSON above all) cost the worker more than any other step after verification.
    ///
    /// Nil when a row is not one of this batch's notifications or states (a dead letter: those are read back).
    func outboxMessages(for entries: [OutboxEntry]) -> [OutboxMessage]? {
        // In-batch duplicates: the statement stores the first by ordinal, as does this.
        let rows = Dictionary(notifications.map { ($0.notificationUUID, $0) }, uniquingKeysWith: { first, _ in first })
        var messages: [OutboxMessage] = []
        messages.reserveCapacity(entries.count)
        for entry in entries {
            let payload: OutboxMessage.Payload
            switch entry.stream {
            case .decoded:
                guard let uuid = entry.notificationUUID, let row = rows[uuid] else { return nil }
                payload = .decoded(
                    OutboxMessage.DecodedEvent(
                        attributes: OutputEvent.DecodedAttributes(
                            notificationUUID: uuid,
                            version: Int(row.version),
                            notificationType: row.notificationType,
                            subtype: row.subtype,
                            signedDate: row.signedDate.map(Self.dateAsReadBack),
                            environment: row.environment,
                            bundleID: row.bundleId,
                            originalTransactionID: row.originalTransactionId
                        ),
                        json: row.decoded
                    )
                )
            case .subscriptionState:
                guard let json = entry.subscriptionStateJSON, let state = entry.subscriptionState,
                    let version = entry.subscriptionStateVersion
                else { return nil }
                payload = .subscriptionState(
                    OutboxMessage.StateEvent(json: json, attributes: state.eventAttributes, version: version)
                )
            default:
                return nil
            }
            messages.append(OutboxMessage(id: entry.id, stream: entry.stream, key: entry.messageKey, payload: payload))
        }
        return messages
    }

    /// Milliseconds since 1970 as the `Date` postgres-nio decodes from the stored `timestamptz` (microseconds since
    /// 2000), so that `ce_time` is the same string whichever way an event is published.
    static func dateAsReadBack(_ milliseconds: Int64) -> Date {
        let microsecondsSince2000 = (milliseconds - 946_684_800_000) * 1_000
        let postgresEpoch = Date(timeIntervalSince1970: 946_684_800)
        return Date(timeInterval: Double(microsecondsSince2000) / 1_000_000, since: postgresEpoch)
    }
}
