import KafkaClient
import Synchronization

/// Sends one message and waits for its acknowledgement for at most a timeout.
///
/// A send handed to librdkafka cannot be taken back and its wait cannot be cancelled, so the wait runs in a task
/// of its own and the request is answered at the deadline whatever the send does later. (The producer's delivery
/// timeout equals the request's, so a late acknowledgement is rare; Apple's retry of a body that made it after all
/// is a duplicate the workers drop.)
final class ProduceDeadline: Sendable {
    enum Outcome: Sendable {
        case acknowledged(KafkaDeliveryReport)
        case failed(KafkaError)
        case timedOut
    }

    private struct State {
        var waiter: CheckedContinuation<Outcome, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    private init() {}

    static func send(
        _ message: KafkaProducerMessage,
        with producer: KafkaProducer,
        timeout: Duration
    ) async -> Outcome {
        let deadline = ProduceDeadline()
        return await withCheckedContinuation { continuation in
            deadline.state.withLock { $0.waiter = continuation }
            // The timer is recorded before the send starts, so whichever finishes first finds it to cancel.
            let timer = Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                deadline.finish(.timedOut)
            }
            deadline.state.withLock { $0.timer = timer }
            Task {
                do throws(KafkaError) {
                    deadline.finish(.acknowledged(try await producer.send(message)))
                } catch {
                    deadline.finish(.failed(error))
                }
            }
        }
    }

    /// Answers the waiting request with the first outcome; later ones are dropped.
    private func finish(_ outcome: Outcome) {
        let (waiter, timer) = state.withLock { state in
            defer {
                state.waiter = nil
                state.timer = nil
            }
            return (state.waiter, state.timer)
        }
        guard let waiter else { return }
        timer?.cancel()
        waiter.resume(returning: outcome)
    }
}
