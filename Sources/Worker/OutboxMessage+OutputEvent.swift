import KafkaClient
import NotificationStore
import PipelineContract

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The one place output events are built: from an outbox row's typed values, alike whether the store returned them
// from the batch just written (`BatchWriteResult.outboxMessages`) or read them from the table
// (`NotificationStore.pendingOutbox`, `subscriptionStates`).

extension OutboxMessage {
    /// The message this row publishes (``OutputEvent``) in `trace` (by default the row's own), or nil when there is
    /// nothing to publish (its notification or rejection was deleted) or nothing can be built
    /// (``OutboxMessage/Payload/unpublishable(reason:)``).
    func outputEvent(topics: OutputTopics, trace: OutputEvent.Trace?) -> KafkaProducerMessage? {
        switch payload {
        case .decoded(let event):
            event.outputEvent(key: key, topic: topics.decoded, trace: trace)
        case .subscriptionState(let state):
            state.outputEvent(topic: topics.subscriptionState, trace: trace)
        case .deadLetter(let letter):
            letter.outputEvent(key: key, topic: topics.deadLetter, trace: trace)
        case .missing, .unpublishable:
            nil
        }
    }

    /// The trace the row's notification or rejected body arrived in, as its event carries it.
    var trace: OutputEvent.Trace? {
        traceContext.map { OutputEvent.Trace(traceparent: $0.traceparent, tracestate: $0.tracestate) }
    }
}

extension OutboxMessage.DecodedEvent {
    /// The decoded topic's event of this notification, keyed by `key`.
    func outputEvent(key: String?, topic: String, trace: OutputEvent.Trace?) -> KafkaProducerMessage {
        let attributes = OutputEvent.DecodedAttributes(
            notificationUUID: notificationUUID,
            version: version,
            notificationType: notificationType,
            subtype: subtype,
            // `ce_time` is written to the millisecond: the instant of the integer, whichever way the row came.
            signedDate: signedDate.map { Date(timeIntervalSince1970: Double($0) / 1_000) },
            environment: environment,
            bundleID: bundleID,
            originalTransactionID: originalTransactionID
        )
        return OutputEvent.decoded(attributes, json: json, key: key, topic: topic, trace: trace)
    }
}

extension OutboxMessage.StateEvent {
    /// The state topic's record of this state.
    func outputEvent(topic: String, trace: OutputEvent.Trace?) -> KafkaProducerMessage {
        let attributes = OutputEvent.StateAttributes(
            originalTransactionID: originalTransactionID,
            lastNotificationUUID: lastNotificationUUID,
            lastSignedDate: lastSignedDate,
            environment: environment,
            bundleID: bundleID
        )
        return OutputEvent.subscriptionState(attributes, json: json, topic: topic, trace: trace)
    }
}

extension OutboxMessage.DeadLetter {
    /// The dead-letter topic's event of this rejected body, keyed by `key` (the raw message's).
    func outputEvent(key: String?, topic: String, trace: OutputEvent.Trace?) -> KafkaProducerMessage {
        OutputEvent.deadLetter(
            body: body,
            status: status,
            reason: reason,
            receivedAt: receivedAt,
            consumedHeaders: headers,
            source: source,
            key: key,
            topic: topic,
            trace: trace
        )
    }
}
