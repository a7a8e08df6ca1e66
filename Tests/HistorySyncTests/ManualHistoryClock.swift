import Foundation
import HistorySync
import Synchronization

/// A simulated clock for the reconciler: time moves only when a test advances it, and a sleeper wakes once the time
/// passes its deadline. Hours of periodic turns run in seconds, their windows exact.
final class ManualHistoryClock: HistoryClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let state: Mutex<(now: Date, sleepers: [UUID: Sleeper])>

    init(now: Date) {
        state = Mutex((now, [:]))
    }

    func now() -> Date { state.withLock { $0.now } }

    /// Tasks waiting in ``sleep(for:)``.
    var sleepers: Int { state.withLock { $0.sleepers.count } }

    func sleep(for duration: Duration) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    let deadline = state.now.addingTimeInterval(
                        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
                    )
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `interval` and wakes every sleeper whose deadline it passed.
    func advance(by interval: TimeInterval) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.addingTimeInterval(interval)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return Array(due.values)
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Returns once `count` tasks sleep (the reconciler's loops between turns), polling every 10 ms.
    func waitForSleepers(_ count: Int) async throws {
        while sleepers < count {
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
