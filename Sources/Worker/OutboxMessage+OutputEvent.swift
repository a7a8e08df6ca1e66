import KafkaClient
import NotificationStore
import PipelineContract

extension OutboxMessage {
    /// The message this row publishes (``OutputEvent``), or nil when there is nothing to publish (its
    /// notification or rejection was deleted).
    func outputEvent(topics: OutputTopics) -> KafkaProducerMessage? {
        switch payload {
        case .decoded(let event):
            let attributes = OutputEvent.DecodedAttributes(
                notificationUUID: event.notificationUUID,
                notificationType: event.notificationType,
                subtype: event.subtype,
                signedDate: event.signedDate,
                environment: event.environment,
                bundleID: event.bundleID,
                originalTransactionID: event.originalTransactionID
            )
            return OutputEvent.decoded(attributes, json: event.json, key: key, topic: topics.decoded)
        case .subscriptionState(let json):
            return OutputEvent.subscriptionState(json: json, key: key, topic: topics.subscriptionState)
        case .deadLetter(let letter):
            return OutputEvent.deadLetter(
                body: letter.body,
                status: letter.status,
                reason: letter.reason,
                consumedHeaders: letter.headers,
                source: letter.source,
                key: key,
                topic: topics.deadLetter
            )
        case .missing:
            return nil
        }
    }
}
