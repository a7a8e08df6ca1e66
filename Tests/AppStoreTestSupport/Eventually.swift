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

/// Whether `body` finished within `limit`. A body still running then is left to run, so that a test fails where it
/// would otherwise hang the suite: a librdkafka call that never returns cannot be cancelled, nor can a task that
/// waits for something that will never happen.
public func finishes(within limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let outcome = FirstOutcome()
    return await withCheckedContinuation { continuation in
        outcome.hold(continuation)
        Task {
            await body()
            outcome.resolve(true)
        }
        Task {
            try? await Task.sleep(for: limit)
            outcome.resolve(false)
        }
    }
}

/// Resumes a waiter with the first outcome given; later ones are dropped.
private final class FirstOutcome: Sendable {
    private let waiter = Mutex<CheckedContinuation<Bool, Never>?>(nil)

    func hold(_ continuation: CheckedContinuation<Bool, Never>) {
        waiter.withLock { $0 = continuation }
    }

    func resolve(_ outcome: Bool) {
        waiter.withLock { waiter in
            defer { waiter = nil }
            return waiter
        }?.resume(returning: outcome)
    }
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
