import PostgresNIO
import Synchronization

/// Runs one store operation with a deadline that holds even when PostgreSQL stops answering.
///
/// A statement waiting on an unresponsive server (or on a lock) does not react to task cancellation, and a task
/// group would wait for it. So the work runs in its own task; at the deadline the caller gets
/// ``NotificationStoreError/Code/timedOut`` at once, and the connection the work uses is closed, which fails the
/// statement and makes the server roll the transaction back. (A COMMIT already sent may still succeed: writes are
/// idempotent, so the retry of a timed-out batch is harmless either way.)
final class OperationDeadline<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var connection: PostgresConnection?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        /// The caller was answered with a timeout or cancellation; the work's connection must not be used on.
        var abandoned = false
    }

    private let state = Mutex(State())

    private init() {}

    /// Runs `body`, handing it a way to register the connection it leased.
    static func run(
        timeout: Duration,
        timeoutError: @escaping @Sendable () -> NotificationStoreError,
        _ body:
            @escaping @Sendable (_ register: @escaping @Sendable (PostgresConnection) -> Void) async throws -> Result
    ) async throws -> Result {
        let deadline = OperationDeadline<Result>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                deadline.state.withLock { $0.continuation = continuation }
                let work = Task {
                    do {
                        let value = try await body { connection in
                            deadline.register(connection)
                        }
                        deadline.finish(.success(value))
                    } catch {
                        deadline.finish(.failure(error))
                    }
                }
                let timer = Task {
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    deadline.abandon(with: timeoutError())
                }
                deadline.state.withLock {
                    $0.work = work
                    $0.timer = timer
                }
                // A cancellation that came before the tasks were recorded would have had nothing to stop.
                if Task.isCancelled {
                    deadline.abandon(with: CancellationError())
                }
            }
        } onCancel: {
            deadline.abandon(with: CancellationError())
        }
    }

    /// Records the work's connection; one handed over after the deadline is closed at once.
    private func register(_ connection: PostgresConnection) {
        let abandoned = state.withLock { state in
            if !state.abandoned { state.connection = connection }
            return state.abandoned
        }
        if abandoned {
            Task { try? await connection.close() }
        }
    }

    private func finish(_ result: Swift.Result<Result, any Error>) {
        let (continuation, timer) = state.withLock { state in
            defer {
                state.continuation = nil
                state.connection = nil
            }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }

    /// Answers the caller now, stops the work and closes its connection.
    private func abandon(with error: any Error) {
        let (continuation, work, connection) = state.withLock { state in
            defer {
                state.continuation = nil
                state.connection = nil
            }
            guard state.continuation != nil else {
                return (CheckedContinuation<Result, any Error>?.none, Task<Void, Never>?.none, PostgresConnection?.none)
            }
            state.abandoned = true
            return (state.continuation, state.work, state.connection)
        }
        guard let continuation else { return }
        work?.cancel()
        if let connection {
            Task { try? await connection.close() }
        }
        continuation.resume(throwing: error)
    }
}
