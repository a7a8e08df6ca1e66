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
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())
    /// The work's connection, closed when the caller is answered early.
    private let closer: ConnectionCloser

    private init(operations: OperationsInFlight) {
        closer = ConnectionCloser(operations: operations)
    }

    /// Runs `body`, handing it a way to register the connection it leased.
    static func run(
        timeout: Duration,
        operations: OperationsInFlight,
        timeoutError: @escaping @Sendable () -> NotificationStoreError,
        _ body:
            @escaping @Sendable (_ register: @escaping @Sendable (PostgresConnection) -> Void) async throws -> Result
    ) async throws -> Result {
        let deadline = OperationDeadline<Result>(operations: operations)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                deadline.state.withLock { $0.continuation = continuation }
                let closer = deadline.closer
                let id = operations.makeID()
                let work = Task {
                    await ConnectionCloser.$current.withValue(closer) {
                        do {
                            let value = try await body { connection in
                                closer.register(connection)
                            }
                            deadline.finish(.success(value))
                        } catch {
                            deadline.finish(.failure(error))
                        }
                    }
                    operations.remove(id)
                }
                operations.add(work, id: id)
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

    private func finish(_ result: Swift.Result<Result, any Error>) {
        let (continuation, timer) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }

    /// Answers the caller now, stops the work and closes its connection.
    private func abandon(with error: any Error) {
        let (continuation, work) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.work)
        }
        guard let continuation else { return }
        closer.abandon(work)
        continuation.resume(throwing: error)
    }
}

/// Stops an abandoned operation: cancels its task and closes its connection, but never while COPY data is being
/// sent on it. postgres-nio 1.33.2 stops the process (a precondition in its connection state machine) when a
/// connection in that state is closed, or its query cancelled; a test hit it. A COPY in progress is let finish
/// (it is bounded by the batch), then the task is cancelled and the connection closed, which fails the statement
/// after it and rolls the transaction back.
final class ConnectionCloser: Sendable {
    /// The closer of the operation the current task works for.
    @TaskLocal static var current: ConnectionCloser?

    private struct State {
        var connection: PostgresConnection?
        var copying = false
        var abandoned = false
        var work: Task<Void, Never>?
    }

    private let state = Mutex(State())
    /// The store's operations, which count the COPYs being sent.
    private let operations: OperationsInFlight

    init(operations: OperationsInFlight) {
        self.operations = operations
    }

    /// Records the operation's connection; one handed over after ``abandon(_:)`` is closed at once.
    func register(_ connection: PostgresConnection) {
        let closeNow = state.withLock { state in
            state.connection = connection
            return state.abandoned && !state.copying
        }
        if closeNow { Task { try? await connection.close() } }
    }

    /// Cancels `work` and closes the connection now, or once the COPY in progress ended.
    func abandon(_ work: Task<Void, Never>?) {
        let stopNow = state.withLock { state -> Bool in
            state.abandoned = true
            state.work = work
            return !state.copying
        }
        if stopNow { stop() }
    }

    /// Runs `body` (a COPY) with stopping held back until it ends; once the operation was abandoned, or the
    /// store's pool is closing, no COPY starts.
    func copying<T>(_ body: () async throws -> T) async throws -> T {
        guard operations.copyStarted() else { throw CancellationError() }
        let abandoned = state.withLock { state in
            if !state.abandoned { state.copying = true }
            return state.abandoned
        }
        if abandoned {
            operations.copyEnded()
            throw CancellationError()
        }
        defer {
            let stopNow = state.withLock { state -> Bool in
                state.copying = false
                return state.abandoned
            }
            operations.copyEnded()
            if stopNow { stop() }
        }
        return try await body()
    }

    private func stop() {
        let (work, connection) = state.withLock { ($0.work, $0.connection) }
        work?.cancel()
        if let connection { Task { try? await connection.close() } }
    }
}
