import NIOCore
import Synchronization

/// Lets one task at a time through, the others waiting their turn in arrival order: for a resource whose use spans
/// suspension points (a reader's assignment, held across its polls), where a `Mutex` cannot be held.
final class AsyncTurnstile: Sendable {
    private struct State {
        var taken = false
        var waiting = CircularBuffer<CheckedContinuation<Void, Never>>()
    }

    private let state = Mutex(State())

    /// Runs `body` when no other task is inside. Waiting is not cancellable: each turn ends by its own timeouts.
    func withTurn<Value>(_ body: () async throws -> Value) async rethrows -> Value {
        await enter()
        defer { leave() }
        return try await body()
    }

    private func enter() async {
        await withCheckedContinuation { continuation in
            let entered = state.withLock { state in
                guard state.taken else {
                    state.taken = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if entered { continuation.resume() }
        }
    }

    /// Hands the turn to the longest waiting task, which then holds it; or frees it.
    private func leave() {
        let next = state.withLock { state in
            guard let next = state.waiting.popFirst() else {
                state.taken = false
                return CheckedContinuation<Void, Never>?.none
            }
            return next
        }
        next?.resume()
    }
}
