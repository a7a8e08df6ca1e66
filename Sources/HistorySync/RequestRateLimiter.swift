/// Spaces requests evenly at no more than a configured rate, across every task that shares it (all windows of a
/// sync, all periodic runs): Apple's limits are per app and per hour, and a burst now is a 429 later.
package actor RequestRateLimiter {
    private let interval: Duration
    private var next: ContinuousClock.Instant = .now

    /// - Parameter requestsPerSecond: must be positive.
    package init(requestsPerSecond: Double) {
        precondition(requestsPerSecond > 0, "the request rate must be positive")
        interval = .seconds(1 / requestsPerSecond)
    }

    /// Returns when the caller may send its request.
    package func acquire() async {
        let now = ContinuousClock.now
        let slot = max(next, now)
        next = slot + interval
        if slot > now {
            try? await Task.sleep(until: slot, clock: .continuous)
        }
    }
}
