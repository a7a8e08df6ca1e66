import KafkaClient
import NotificationStore
import PipelineContract

extension OutboxMessage {
    /// The message this row publishes (``OutputEvent``), or nil when there is nothing to publish (its
    /// notification or rejection was deleted) or nothing can be built (``OutboxMessage/Payload/unpublishable(reason:)``).
    func outputEvent(topics: OutputTopics) -> KafkaProducerMessage? {
        switch payload {
        case .decoded(let event):
            return OutputEvent.decoded(event.attributes, json: event.json, key: key, topic: topics.decoded)
        case .subscriptionState(let state):
            return OutputEvent.subscriptionState(state.attributes, json: state.json, topic: topics.subscriptionState)
        case .deadLetter(let letter):
            return OutputEvent.deadLetter(
                body: letter.body,
                status: letter.status,
                reason: letter.reason,
                receivedAt: letter.receivedAt,
                consumedHeaders: letter.headers,
                source: letter.source,
                key: key,
                topic: topics.deadLetter
            )
        case .missing, .unpublishable:
            return nil
        }
    }
}
