import Synchronization

/// The store operations whose tasks still run, including those whose callers were already answered (a deadline):
/// the store waits for them before its pool closes their connections.
final class OperationsInFlight: Sendable {
    private struct State {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        /// Ids whose task ended before it was added.
        var ended: Set<UInt64> = []
        var nextID: UInt64 = 0
        /// Operations sending COPY data now.
        var copying = 0
        /// Set once the pool is about to close: no COPY starts after that.
        var poolClosing = false
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

    /// Marks a COPY as started; false once the pool is closing, when none may start (postgres-nio 1.33.2 stops the
    /// process when a connection closes while COPY data is being sent).
    func copyStarted() -> Bool {
        state.withLock { state in
            guard !state.poolClosing else { return false }
            state.copying += 1
            return true
        }
    }

    func copyEnded() {
        state.withLock { $0.copying -= 1 }
    }

    /// Whether the pool may close its connections now: no COPY is being sent. If so, none starts from now on; if
    /// not, how many are being sent.
    func closePool() -> (allowed: Bool, copying: Int) {
        state.withLock { state in
            guard state.copying == 0 else { return (false, state.copying) }
            state.poolClosing = true
            return (true, 0)
        }
    }

    /// How many operations are running.
    var count: Int { state.withLock { $0.tasks.count } }

    /// Waits for the operations running now to end, for at most `timeout`, even when the caller is cancelled:
    /// the pool must not close a connection while one of them is sending COPY data.
    func drain(timeout: Duration) async {
        let pending = state.withLock { Array($0.tasks.values) }
        await Self.wait(for: pending, atMost: timeout)
    }

    /// Waits for `tasks` to end, for at most `timeout`, even when the caller is cancelled; whether they all ended.
    /// Tasks still running then go on.
    @discardableResult
    static func wait(for tasks: [Task<Void, Never>], atMost timeout: Duration) async -> Bool {
        guard !tasks.isEmpty else { return true }
        return await Task.detached {
            let (first, outcome) = AsyncStream<Bool>.makeStream()
            let waiter = Task {
                for task in tasks { await task.value }
                outcome.yield(true)
            }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                outcome.yield(false)
            }
            var iterator = first.makeAsyncIterator()
            let ended = await iterator.next() ?? false
            timer.cancel()
            waiter.cancel()
            return ended
        }.value
    }
}
