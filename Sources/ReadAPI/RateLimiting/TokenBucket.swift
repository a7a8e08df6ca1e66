/// A token bucket: `rate` tokens a second, at most `burst` held; a request takes one. Pure: the caller gives the
/// time.
package struct TokenBucket: Sendable, Hashable {
    package let rate: Double
    package let burst: Double
    private var tokens: Double
    private var updated: ContinuousClock.Instant

    /// A full bucket at `now`.
    package init(rate: Double, burst: Double, now: ContinuousClock.Instant) {
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.updated = now
    }

    /// Takes a token at `now`: nil when there was one, else how long until there is.
    package mutating func take(now: ContinuousClock.Instant) -> Duration? {
        if now > updated {
            let elapsed = updated.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            tokens = min(burst, tokens + seconds * rate)
            updated = now
        }
        guard tokens >= 1 else { return .seconds((1 - tokens) / rate) }
        tokens -= 1
        return nil
    }
}
