extension KafkaProducer {
    /// The outcome of one send: one result per message, complete when every message got its report.
    ///
    /// One object per ``KafkaProducer/send(_:)`` or ``KafkaProducer/send(contentsOf:)`` call, so a batch waits on one
    /// continuation however many messages it holds.
    final class DeliveryGroup: Sendable {
        private struct State {
            var results: [Result<KafkaDeliveryReport, KafkaError>?]
            var remaining: Int
            var waiter: CheckedContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>?
        }

        private let state: Locked<State>

        init(count: Int) {
            state = Locked(State(results: Array(repeating: nil, count: count), remaining: count, waiter: nil))
        }

        /// Records the outcome of message `index`; the first outcome of a message wins.
        func resolve(_ index: Int, _ result: Result<KafkaDeliveryReport, KafkaError>) {
            let finished = state.withLock {
                state -> (
                    CheckedContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>,
                    [Result<KafkaDeliveryReport, KafkaError>]
                )? in
                guard state.results[index] == nil else { return nil }
                state.results[index] = result
                state.remaining -= 1
                guard state.remaining == 0, let waiter = state.waiter else { return nil }
                state.waiter = nil
                return (waiter, state.results.map { $0! })
            }
            if let (waiter, results) = finished { waiter.resume(returning: results) }
        }

        /// Waits until every message has an outcome.
        func results() async -> [Result<KafkaDeliveryReport, KafkaError>] {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> [Result<KafkaDeliveryReport, KafkaError>]? in
                    guard state.remaining > 0 else { return state.results.map { $0! } }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// A message handed to librdkafka: where its outcome goes.
    struct PendingDelivery: Sendable {
        enum Target: Sendable {
            /// Message `index` of a ``KafkaProducer/send(contentsOf:)``.
            case group(DeliveryGroup, index: Int)
            /// A ``KafkaProducer/trySend(_:onDelivery:)``.
            case callback(@Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void)
        }

        let target: Target
        let topic: String

        func succeed(partition: Int32, offset: Int64) {
            resolve(
                .success(KafkaDeliveryReport(topicPartition: .init(topic: topic, partition: partition), offset: offset))
            )
        }

        func fail(_ error: KafkaError) {
            resolve(.failure(error))
        }

        private func resolve(_ result: Result<KafkaDeliveryReport, KafkaError>) {
            switch target {
            case .group(let group, let index): group.resolve(index, result)
            case .callback(let onDelivery): onDelivery(result)
            }
        }
    }
}
