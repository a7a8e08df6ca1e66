#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The reconciler's time: the instant its windows end at, and the waits between periodic turns. The system clock in
/// service; tests drive a simulated one through hours of turns in seconds.
package protocol HistoryClock: Sendable {
    /// Now, as the ends of windows and Apple's history limit are reckoned.
    func now() -> Date
    /// Waits `duration`; throws when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system's wall clock and `Task.sleep`.
package struct SystemHistoryClock: HistoryClock {
    package init() {}

    package func now() -> Date { Date() }

    package func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
