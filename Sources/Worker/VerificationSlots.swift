import Synchronization

/// The places for verifying bodies that every batch of a worker shares: at most ``count`` runs of bodies verify at
/// once, whatever the number of batches being verified.
///
/// Without them, each of the batches verified at once (``WorkerConfiguration/maximumConcurrentBatches``) would verify
/// on up to ``WorkerConfiguration/verificationParallelism`` threads of the concurrency runtime's pool, and on Linux
/// that pool has a thread per core of the node whatever the container's CPU limit: a worker limited to 2 CPUs on a
/// 32-core node would verify on 8 threads, spend its quota early in each scheduling period and be throttled for the
/// rest of it, its poll loop and database connections with it.
///
/// Places are given in the order they were asked for. Taking one is not cancellable: a place is held only while a run
/// verifies, which always ends.
final class VerificationSlots: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
        var mostHeld = 0

        mutating func takeFree(count: Int) -> Bool {
            guard free > 0 else { return false }
            free -= 1
            mostHeld = max(mostHeld, count - free)
            return true
        }
    }

    /// Runs that may verify at once.
    let count: Int
    private let state: Mutex<State>

    init(count: Int) {
        self.count = max(1, count)
        self.state = Mutex(State(free: self.count))
    }

    /// The most places held at once so far.
    var mostHeld: Int { state.withLock { $0.mostHeld } }

    /// Runs waiting for a place now.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Takes a place, waiting for one to be given back when none is free; give it back with ``give()``.
    func take() async {
        let count = count
        if state.withLock({ $0.takeFree(count: count) }) { return }
        await withCheckedContinuation { continuation in
            let taken = state.withLock { state in
                // One may have been given back since the first look.
                guard state.takeFree(count: count) else {
                    state.waiting.append(continuation)
                    return false
                }
                return true
            }
            if taken { continuation.resume() }
        }
    }

    /// Gives a place back: to the run that has waited longest, if one waits.
    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            // The place passes straight to it: as many are held as before.
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
