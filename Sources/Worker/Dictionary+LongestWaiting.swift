extension Dictionary where Key: Comparable {
    /// Up to `limit` keys whose values are `ready`, the longest waiting first (the earliest `since`, then the lowest
    /// key). The state machines call this after every poll or write: it gathers keys and instants, not a filtered
    /// copy of the dictionary.
    func longestWaitingKeys(
        _ limit: Int,
        where ready: (Value) -> Bool,
        since: (Value) -> ContinuousClock.Instant
    ) -> [Key] {
        var waiting: [(since: ContinuousClock.Instant, key: Key)] = []
        for (key, value) in self where ready(value) {
            waiting.append((since(value), key))
        }
        guard !waiting.isEmpty else { return [] }
        waiting.sort { ($0.since, $0.key) < ($1.since, $1.key) }
        return waiting.prefix(limit).map(\.key)
    }
}
