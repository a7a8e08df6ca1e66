import AppStoreModels
import Foundation
import KafkaClient
import NIOCore
import PipelineContract

extension KafkaProducerMessage {
    /// A V2 body as the ingress writes it to the raw topic for `app` (Sandbox route): keyed by the peeked
    /// originalTransactionId, with the raw-topic headers.
    package static func rawNotification(body: Data, app: String, topic: String) -> KafkaProducerMessage {
        let headers = RawNotificationHeaders(
            version: 2,
            environment: .sandbox,
            app: app,
            receivedAt: Date(),
            requestID: UUID().uuidString,
            source: .ingress
        )
        return headers.message(body: ByteBuffer(bytes: body), topic: topic)
    }
}
