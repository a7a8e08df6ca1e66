import Synchronization

/// Counts the notification requests in progress and refuses one more past the limit, so a flood is answered
/// quickly with 503 (Apple retries) instead of queueing without bound.
final class ConcurrencyLimiter: Sendable {
    let limit: Int
    private let inFlight = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// The requests in progress now.
    var current: Int { inFlight.load(ordering: .relaxed) }

    /// Takes a place, or returns false when all are taken; a taken place must be given back with ``release()``.
    func acquire() -> Bool {
        let (previous, _) = inFlight.add(1, ordering: .relaxed)
        guard previous < limit else {
            inFlight.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func release() {
        inFlight.subtract(1, ordering: .relaxed)
    }
}
