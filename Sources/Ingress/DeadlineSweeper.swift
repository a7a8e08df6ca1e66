import Synchronization

/// Entries that each expire at a deadline unless removed first.
///
/// One sweeper task expires the entries past their deadline every ``granularity`` while any is pending, instead of a
/// timer per entry: at a few thousand requests a second, a timer per request and the wake-ups of the thread that runs
/// it took a tenth of the ingress's CPU. An entry expires up to one ``granularity`` after its deadline.
final class DeadlineSweeper<Entry: Sendable>: Sendable {
    private struct Pending {
        var entry: Entry
        var deadline: ContinuousClock.Instant
    }

    private struct State {
        var pending: [UInt64: Pending] = [:]
        var nextID: UInt64 = 0
        var isSweeping = false
    }

    /// How late after its deadline an entry may expire: the sweeper's period.
    let granularity: Duration
    private let expire: @Sendable (Entry) -> Void
    private let state = Mutex(State())

    /// - Parameter expire: Called, outside any lock, with each entry that reached its deadline before removal.
    init(granularity: Duration, expire: @escaping @Sendable (Entry) -> Void) {
        self.granularity = granularity
        self.expire = expire
    }

    /// Adds `entry`, to expire at `deadline`; returns its id for ``remove(_:)``.
    func add(_ entry: Entry, deadline: ContinuousClock.Instant) -> UInt64 {
        let (id, startsSweeper) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.pending[id] = Pending(entry: entry, deadline: deadline)
            defer { state.isSweeping = true }
            return (id, !state.isSweeping)
        }
        if startsSweeper {
            Task { await self.sweep() }
        }
        return id
    }

    /// Removes entry `id` before its deadline: the entry, or nil when it expired already (or was removed).
    func remove(_ id: UInt64) -> Entry? {
        state.withLock { $0.pending.removeValue(forKey: id) }?.entry
    }

    /// Expires the entries past their deadline every ``granularity``; ends once none is pending (the next
    /// ``add(_:deadline:)`` starts it again).
    private func sweep() async {
        while true {
            try? await Task.sleep(for: granularity)
            let now = ContinuousClock.now
            let (expired, isDone) = state.withLock { state -> ([Entry], Bool) in
                let expired = state.pending.filter { $0.value.deadline <= now }
                for id in expired.keys { state.pending[id] = nil }
                state.isSweeping = !state.pending.isEmpty
                return (expired.values.map(\.entry), !state.isSweeping)
            }
            for entry in expired { expire(entry) }
            if isDone { return }
        }
    }
}
