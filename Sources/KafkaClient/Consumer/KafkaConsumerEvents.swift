/// A ``KafkaConsumer``'s events as an asynchronous sequence: each step is one poll, whose events are handed out one
/// by one. Asking for the next event is what lets a revocation proceed (see ``KafkaConsumerEvent/partitionsRevoked(_:)``).
package struct KafkaConsumerEvents: AsyncSequence, Sendable {
    /// The events are ``KafkaConsumerEvent``s.
    package typealias Element = KafkaConsumerEvent

    let consumer: KafkaConsumer
    let maxMessages: Int
    let maxWait: Duration

    /// An iterator that polls the consumer as its events are used up.
    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: consumer, maxMessages: maxMessages, maxWait: maxWait)
    }

    /// Polls when the events of the last poll are used up; ends once the consumer is closed or the task cancelled.
    package struct AsyncIterator: AsyncIteratorProtocol {
        let consumer: KafkaConsumer
        let maxMessages: Int
        let maxWait: Duration
        private var pending: [KafkaConsumerEvent] = []

        init(consumer: KafkaConsumer, maxMessages: Int, maxWait: Duration) {
            self.consumer = consumer
            self.maxMessages = maxMessages
            self.maxWait = maxWait
        }

        /// The next event, polling when none is pending; nil once the consumer is closed or the task cancelled.
        package mutating func next() async throws -> KafkaConsumerEvent? {
            while pending.isEmpty {
                guard !Task.isCancelled, consumer.state.withLock({ $0.phase }) == .running else { return nil }
                guard let events = try await consumer.pollUnlessClosed(maxMessages: maxMessages, maxWait: maxWait)
                else {
                    return nil
                }
                pending = events
            }
            return pending.removeFirst()
        }
    }
}
