import Synchronization

/// The days whose `notification_bodies` partitions (the day's month and the next) this store's committed
/// transactions made sure of lately, so that a batch of a known day does not ask again: in the steady state every
/// batch is of today, and asking cost a statement and a round trip per batch.
///
/// Retention drops old months, so a day is trusted for ``lifetime`` only; and should a partition be gone anyway (a
/// month dropped early, a failover that lost its creation), the insert fails as a row-data error and the batch's
/// row-by-row retry makes sure of its partitions again. Every failed write forgets everything.
final class BodyPartitionMemo: Sendable {
    /// How long a day, once made sure of, is trusted.
    let lifetime: Duration
    private let days = Mutex<[Int64: ContinuousClock.Instant]>([:])

    init(lifetime: Duration = .seconds(600)) {
        self.lifetime = lifetime
    }

    /// The days of `days` (milliseconds since 1970, each the start of a UTC day) not made sure of lately.
    func unknown(_ days: Set<Int64>) -> Set<Int64> {
        let now = ContinuousClock.now
        return self.days.withLock { known in
            days.filter { day in known[day].map { $0.duration(to: now) >= lifetime } ?? true }
        }
    }

    /// Remembers `days` as made sure of by a transaction that committed; drops the days past their lifetime.
    func remember(_ days: Set<Int64>) {
        guard !days.isEmpty else { return }
        let now = ContinuousClock.now
        let lifetime = lifetime
        self.days.withLock { known in
            known = known.filter { $0.value.duration(to: now) < lifetime }
            for day in days { known[day] = now }
        }
    }

    /// Forgets every day: after a failed write, whose cause may be a partition gone.
    func forgetAll() {
        days.withLock { $0 = [:] }
    }
}
