import KafkaClient
import Synchronization

/// Sends messages and waits for each acknowledgement for at most a timeout.
///
/// A send handed to librdkafka cannot be taken back and its wait cannot be cancelled, so each wait runs in a task
/// of its own and the request is answered at its deadline whatever the send does later. (The producer's delivery
/// timeout equals the request's, so a late acknowledgement is rare; Apple's retry of a body that made it after all
/// is a duplicate the workers drop.) One sweeper task answers the waits that passed their deadline, every
/// ``granularity`` while any is pending, instead of a timer task per request: at a few thousand requests a second
/// those timers took a tenth of the ingress's CPU.
final class ProduceDeadlines: Sendable {
    enum Outcome: Sendable {
        case acknowledged(KafkaDeliveryReport)
        case failed(KafkaError)
        case timedOut
    }

    private struct Waiter {
        var continuation: CheckedContinuation<Outcome, Never>
        var deadline: ContinuousClock.Instant
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        var isSweeping = false
    }

    /// How long a send may wait for its acknowledgement.
    let timeout: Duration
    /// How late after its deadline a wait may be answered: the sweeper's period, 50 ms or a tenth of the timeout.
    let granularity: Duration
    private let state = Mutex(State())

    init(timeout: Duration) {
        self.timeout = timeout
        self.granularity = min(.milliseconds(50), timeout / 10)
    }

    /// Produces `message` and waits for the first of its acknowledgement, its failure, or the deadline.
    func send(_ message: KafkaProducerMessage, with producer: KafkaProducer) async -> Outcome {
        await withCheckedContinuation { continuation in
            let deadline = ContinuousClock.now.advanced(by: timeout)
            let (id, startsSweeper) = state.withLock { state in
                let id = state.nextID
                state.nextID += 1
                state.waiters[id] = Waiter(continuation: continuation, deadline: deadline)
                defer { state.isSweeping = true }
                return (id, !state.isSweeping)
            }
            if startsSweeper {
                Task { await self.sweep() }
            }
            Task {
                do throws(KafkaError) {
                    self.finish(id, .acknowledged(try await producer.send(message)))
                } catch {
                    self.finish(id, .failed(error))
                }
            }
        }
    }

    /// Answers wait `id` with `outcome`, unless the sweeper answered it already.
    private func finish(_ id: UInt64, _ outcome: Outcome) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: outcome)
    }

    /// Times out the waits past their deadline every ``granularity``; ends once none is pending (the next send starts
    /// it again).
    private func sweep() async {
        while true {
            try? await Task.sleep(for: granularity)
            let now = ContinuousClock.now
            let (expired, isDone) = state.withLock { state -> ([Waiter], Bool) in
                let expired = state.waiters.filter { $0.value.deadline <= now }
                for id in expired.keys { state.waiters[id] = nil }
                state.isSweeping = !state.waiters.isEmpty
                return (Array(expired.values), !state.isSweeping)
            }
            for waiter in expired { waiter.continuation.resume(returning: .timedOut) }
            if isDone { return }
        }
    }
}
