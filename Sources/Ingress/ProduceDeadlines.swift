import KafkaClient

/// Sends messages and answers each with its acknowledgement, its failure, or its deadline, whichever comes first.
///
/// A send handed to librdkafka cannot be taken back, so the request is answered at its deadline whatever the send
/// does later. (The producer's delivery timeout equals the request's, so a late acknowledgement is rare; Apple's
/// retry of a body that made it after all is a duplicate the workers drop.) The deadlines are kept by a
/// ``DeadlineSweeper`` rather than a timer per request, and the producer's delivery report calls the waiting request
/// back directly rather than through a task per send: both cost a noticeable share of the ingress's CPU at a few
/// thousand requests a second.
final class ProduceDeadlines: Sendable {
    enum Outcome: Sendable {
        case acknowledged(KafkaDeliveryReport)
        case failed(KafkaError)
        case timedOut
    }

    /// How long a send may wait for its acknowledgement.
    let timeout: Duration
    private let waits: DeadlineSweeper<@Sendable (Outcome) -> Void>

    /// Waits are answered at most 50 ms, or a tenth of the timeout, after their deadline.
    init(timeout: Duration) {
        self.timeout = timeout
        self.waits = DeadlineSweeper(granularity: min(.milliseconds(50), timeout / 10)) { wait in
            wait(.timedOut)
        }
    }

    /// Produces `message`; `completion` is called once, on a thread of librdkafka's or the sweeper's, with the first
    /// of its acknowledgement, its failure, or the deadline.
    func send(
        _ message: KafkaProducerMessage,
        with producer: KafkaProducer,
        completion: @escaping @Sendable (Outcome) -> Void
    ) {
        let id = waits.add(completion, deadline: ContinuousClock.now.advanced(by: timeout))
        let handed = producer.trySend(message) { result in self.finish(id, result) }
        guard !handed else { return }
        // librdkafka's queue is full: wait for room in a task of its own, so the deadline still answers.
        Task {
            let result: Result<KafkaDeliveryReport, KafkaError>
            do throws(KafkaError) {
                result = .success(try await producer.send(message))
            } catch {
                result = .failure(error)
            }
            self.finish(id, result)
        }
    }

    /// Answers wait `id` with the send's result, unless its deadline answered it already.
    private func finish(_ id: UInt64, _ result: Result<KafkaDeliveryReport, KafkaError>) {
        guard let wait = waits.remove(id) else { return }
        switch result {
        case .success(let report): wait(.acknowledged(report))
        case .failure(let error): wait(.failed(error))
        }
    }
}
