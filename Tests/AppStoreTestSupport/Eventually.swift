import Synchronization

/// Waits until `condition` holds, checking every 50 ms, for at most `timeout`; returns whether it held.
///
/// For waiting on a state rather than for a fixed time: the timeout is a limit for a state that never comes, long
/// enough for a loaded 2-core test run, and a test that waits for a state goes on as soon as it is there.
public func eventually(
    timeout: Duration = .seconds(60),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}

/// A count that concurrent tasks increase and a test reads.
public final class SharedCount: Sendable {
    private let count = Mutex(0)

    public init() {}

    public var value: Int { count.withLock { $0 } }

    public func increment() {
        count.withLock { $0 += 1 }
    }
}
