#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PreparedBatch {
    /// The messages of the outbox rows this batch's write returned, from the rows in memory: reading them back
    /// (the `decoded` JSON above all) cost the worker more than any other step after verification. Equal to what
    /// ``NotificationStore/pendingOutbox(source:limit:)`` reads for the same rows.
    ///
    /// Nil when a row is not one of this batch's notifications or states (a dead letter: those are read back).
    /// `storedAt`: when the batch's transaction committed.
    func outboxMessages(for entries: [OutboxEntry], storedAt: Date) -> [OutboxMessage]? {
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
                        notificationUUID: uuid,
                        version: Int(row.version),
                        notificationType: row.notificationType,
                        subtype: row.subtype,
                        signedDate: row.signedDate,
                        environment: row.environment,
                        bundleID: row.bundleId,
                        originalTransactionID: row.originalTransactionId,
                        json: row.decoded
                    )
                )
            case .subscriptionState:
                guard let json = entry.subscriptionStateJSON, let state = entry.subscriptionState,
                    let version = entry.subscriptionStateVersion
                else { return nil }
                payload = .subscriptionState(OutboxMessage.StateEvent(state, json: json, version: version))
            default:
                return nil
            }
            messages.append(
                OutboxMessage(
                    id: entry.id,
                    stream: entry.stream,
                    key: entry.messageKey,
                    payload: payload,
                    traceContext: entry.traceContext,
                    storedAt: storedAt
                )
            )
        }
        return messages
    }
}

extension OutboxMessage.StateEvent {
    /// The event of `state`, as the write that changed it returned it with its JSON and version.
    fileprivate init(_ state: SubscriptionState, json: String, version: Int64) {
        self.init(
            json: json,
            originalTransactionID: state.originalTransactionId,
            lastNotificationUUID: state.lastNotificationUUID,
            lastSignedDate: state.lastSignedDate,
            environment: state.environment,
            bundleID: state.bundleId,
            version: version
        )
    }
}
