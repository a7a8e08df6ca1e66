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
                            deadline.state.withLock { $0.connection = connection }
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
            }
        } onCancel: {
            deadline.abandon(with: CancellationError())
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
