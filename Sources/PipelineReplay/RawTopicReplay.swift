import Foundation
import KafkaClient
import Logging
import NIOCore
import PipelineContract

/// Produces replayed bodies to the raw topic, marked `asnp-source: replay`, and waits for every acknowledgement.
package struct RawTopicReplay {
    package let producer: KafkaProducer
    package let topic: String

    package init(producer: KafkaProducer, topic: String) {
        self.producer = producer
        self.topic = topic
    }

    /// A raw-topic message for a body and the headers it was first consumed with; keyed as the ingress keys it.
    package func message(body: [UInt8], headers: RawNotificationHeaders) -> KafkaProducerMessage {
        var replayed = headers
        replayed.source = .replay
        return replayed.message(body: ByteBuffer(bytes: body), topic: topic)
    }

    /// A consumed raw-topic message again, same key and headers but the source.
    package func message(copying original: KafkaMessage) -> KafkaProducerMessage {
        var headers = original.headers.filter { $0.key != RawNotificationHeaders.Name.source }
        headers.append(
            KafkaHeader(key: RawNotificationHeaders.Name.source, string: RawNotificationHeaders.Source.replay.rawValue)
        )
        return KafkaProducerMessage(topic: topic, key: original.key, value: original.value, headers: headers)
    }

    /// Sends the messages; the indices acknowledged, and the first failure if any.
    package func send(_ messages: [KafkaProducerMessage]) async -> (acknowledged: [Int], failure: KafkaError?) {
        var acknowledged: [Int] = []
        var failure: KafkaError?
        for (index, result) in await producer.send(contentsOf: messages).enumerated() {
            switch result {
            case .success: acknowledged.append(index)
            case .failure(let error): failure = failure ?? error
            }
        }
        return (acknowledged, failure)
    }

    /// Runs `body` with a replay whose producer runs meanwhile and is drained afterwards.
    package static func with<T: Sendable>(
        cluster: KafkaClusterConfiguration,
        topic: String,
        logger: Logger,
        _ body: (RawTopicReplay) async throws -> T
    ) async throws -> T {
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(cluster: cluster), logger: logger)
        let running = Task { try await producer.run() }
        do {
            let result = try await body(RawTopicReplay(producer: producer, topic: topic))
            running.cancel()
            try await running.value
            return result
        } catch {
            running.cancel()
            _ = try? await running.value
            throw error
        }
    }
}
