import Synchronization

/// The store operations whose tasks still run, including those whose callers were already answered (a deadline):
/// the store waits for them before its pool closes their connections.
final class OperationsInFlight: Sendable {
    private struct State {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        /// Ids whose task ended before it was added.
        var ended: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// An id for an operation about to start.
    func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    func add(_ task: Task<Void, Never>, id: UInt64) {
        state.withLock { state in
            if state.ended.remove(id) == nil { state.tasks[id] = task }
        }
    }

    func remove(_ id: UInt64) {
        state.withLock { state in
            if state.tasks.removeValue(forKey: id) == nil { state.ended.insert(id) }
        }
    }

    /// Waits for the operations running now to end, for at most `timeout`, even when the caller is cancelled:
    /// the pool must not close a connection while one of them is sending COPY data.
    func drain(timeout: Duration) async {
        let pending = state.withLock { Array($0.tasks.values) }
        guard !pending.isEmpty else { return }
        await Task.detached {
            let (first, signal) = AsyncStream<Void>.makeStream()
            let waiter = Task {
                for task in pending { await task.value }
                signal.yield()
            }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                signal.yield()
            }
            var iterator = first.makeAsyncIterator()
            _ = await iterator.next()
            timer.cancel()
            waiter.cancel()
        }.value
    }
}
