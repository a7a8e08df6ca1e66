import Synchronization

/// A ``TokenBucket`` per key id, on this replica: each key's own rate, else the API's default.
package final class KeyRateLimiter: Sendable {
    private let defaultRate: Double
    private let defaultBurst: Double
    private let buckets = Mutex<[String: TokenBucket]>([:])

    package init(requestsPerSecond: Double, burst: Double) {
        defaultRate = requestsPerSecond
        defaultBurst = burst
    }

    /// Takes a request of `key` at `now`: nil when allowed, else how long until one is. A key whose rate changed (a
    /// new keys file) starts a full bucket at its new rate.
    package func take(_ key: APIKey, now: ContinuousClock.Instant = .now) -> Duration? {
        let rate = key.requestsPerSecond ?? defaultRate
        let burst = key.burst ?? defaultBurst
        return buckets.withLock { buckets in
            if buckets[key.id]?.rate != rate || buckets[key.id]?.burst != burst {
                buckets[key.id] = TokenBucket(rate: rate, burst: burst, now: now)
            }
            return buckets[key.id]!.take(now: now)
        }
    }
}
