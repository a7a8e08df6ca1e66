import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// postgres-nio's connection pool with what a service needs around it: a deadline on every operation that holds even
/// when the server stops answering, transactions held to the same deadline by the server, a shutdown that ends, and
/// failures classified (``PostgresFailure``). Knows nothing of the tables.
///
/// Its state — the operations running, what each holds, whether it shuts down — is one ``StateMachine``, in a lock;
/// this type performs the machine's actions (answers callers, cancels tasks, closes connections).
package final class PostgresRuntime: Sendable {
    package let configuration: Configuration
    package let logger: Logger
    private let client: PostgresClient
    private let state = Mutex(Machine())

    typealias Machine = StateMachine<PostgresConnection, Task<Void, Never>, @Sendable (any Error) -> Void>

    /// Creates a runtime; nothing connects until ``run()`` runs and an operation needs a connection.
    package init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.client = PostgresClient(configuration: configuration.clientConfiguration, backgroundLogger: logger)
    }

    /// Operations whose work has not ended, their callers answered or not.
    package var operationsRunning: Int { state.withLock(\.operationsRunning) }

    /// The connections operations hold now, each with its operation and for how long; "none" if none.
    package var leases: String { state.withLock { $0.leases(now: .now) } }

    /// Runs the connection pool until cancelled or gracefully shut down.
    ///
    /// Before the pool closes its connections, the operations still running end (for at most the operation timeout
    /// and 5 s), those whose callers already had their answer (a deadline) included. The pool then gets the connect
    /// timeout and 5 s to end, and is left if it takes longer, with an error naming the connections operations still
    /// hold: a shutdown must end.
    package func run() async {
        // Detached, so that neither the cancellation nor the graceful shutdown reaches it before the drain below. An
        // operation leased before the task starts waits for it (postgres-nio logs that run() was not called yet).
        let pool = Task.detached { [client] in await client.run() }
        try? await gracefulShutdown()
        let drainLimit = configuration.operationTimeout + .seconds(5)
        let works = state.withLock { $0.shutdownRequested() }
        logger.debug("Stopping the connection pool", metadata: ["operations": "\(works.count)"])
        await Self.wait(for: works, atMost: drainLimit)
        state.withLock { $0.drainEnded() }
        pool.cancel()
        let closeLimit = configuration.connectTimeout + .seconds(5)
        if await !Self.wait(for: [pool], atMost: closeLimit) {
            logger.error(
                "The PostgreSQL connection pool did not close within \(closeLimit) of its shutdown; leaving it",
                metadata: ["openConnections": "\(leases)", "operationsRunning": "\(operationsRunning)"]
            )
        }
    }

    /// Runs `body` on one pooled connection within the operation timeout.
    ///
    /// At the timeout the caller gets ``PostgresFailure/Kind/timedOut`` at once, and the connection is closed,
    /// which fails the statement and makes the server roll its transaction back (a COMMIT already sent may still
    /// succeed). Errors of PostgreSQL are thrown as ``PostgresFailure``; `body`'s own errors as they are.
    package func withConnection<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let timeout = configuration.operationTimeout
        let endpoint = configuration.endpoint
        let started = ContinuousClock.now
        do {
            return try await withDeadline(operation, body)
        } catch {
            guard var failure = PostgresFailure(classifying: error, operation: operation, endpoint: endpoint) else {
                throw error
            }
            // The server holds a transaction to the same deadline (idle_in_transaction_session_timeout) and ends the
            // connection when it passes, which can reach the work just before the deadline answers the caller.
            if failure.kind == .unavailable, ContinuousClock.now - started >= timeout {
                failure = PostgresFailure(
                    .timedOut,
                    reason:
                        "\(operation) did not finish within \(timeout): the connection closed past it (\(failure.reason))"
                )
            }
            // Timed out: perhaps no connection can be made at all; if so, say why rather than "timed out".
            if failure.kind == .timedOut, let reason = await connectionFailure(operation: operation) {
                throw reason
            }
            throw failure
        }
    }

    /// Runs `body` on one connection, inside one transaction, within the operation timeout.
    ///
    /// The transaction commits when `body` returns and rolls back when it throws. The server enforces the same
    /// timeout on the transaction: a closed socket goes unnoticed by a backend that waits on a lock, and a
    /// transaction that outlived its caller must not keep its row locks from the retry. With `lockTimeout`, a
    /// statement waiting longer than that for a lock fails as a conflict (SQLSTATE 55P03).
    package func inTransaction<Result: Sendable>(
        _ operation: String,
        lockTimeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let logger = self.logger
        let serverTimeout = Self.setting(configuration.operationTimeout)
        let lockTimeoutSetting = lockTimeout.map(Self.setting)
        return try await withConnection(operation) { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                // Without a lock timeout of ours, the session's own (the role's, the server's) stays.
                try await connection.query(
                    """
                    SELECT set_config('statement_timeout', \(serverTimeout), true),
                           set_config('idle_in_transaction_session_timeout', \(serverTimeout), true),
                           set_config(
                               'lock_timeout',
                               COALESCE(\(lockTimeoutSetting)::text, current_setting('lock_timeout')),
                               true
                           )
                    """,
                    logger: logger
                )
                let result = try await body(connection)
                // Past the deadline the caller was told TIMED_OUT: a transaction that got through after all
                // (its lock released, say) must not commit behind its back.
                try Task.checkCancellation()
                try await PostgresNIOWorkarounds.commit(operation, on: connection, logger: logger)
                return result
            } catch {
                if PostgresNIOWorkarounds.canRollBack(connection, after: error) {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                }
                throw error
            }
        }
    }

    /// A duration as a PostgreSQL timeout setting's value, in whole milliseconds; at least 1 ms, since 0 turns a
    /// timeout off.
    package static func setting(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))ms"
    }

    /// Runs `body` in a task of its own, answering the caller at the deadline, or at its cancellation, even while
    /// `body` waits on a server that does not answer (a statement does not react to task cancellation).
    private func withDeadline<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        guard case .start(let id) = state.withLock({ $0.operationRequested(operation) }) else {
            throw PostgresFailure(.shutDown, reason: "\(operation) failed: the connection pool is closed")
        }
        let timeout = configuration.operationTimeout
        let endpoint = configuration.endpoint
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                let fail: @Sendable (any Error) -> Void = { continuation.resume(throwing: $0) }
                self.perform(self.state.withLock { $0.callerWaiting(id, caller: fail) }, .cancelled, operation)
                let work = Task {
                    let result: Swift.Result<Result, any Error>
                    do {
                        result = .success(
                            try await self.client.withConnection { connection in
                                let close = self.state.withLock {
                                    $0.connectionLeased(
                                        id,
                                        connection: connection,
                                        connectionID: "\(connection.id)",
                                        now: .now
                                    )
                                }
                                if let close { Task { try? await close.close() } }
                                defer { self.state.withLock { $0.connectionReturned(id) } }
                                return try await body(connection)
                            }
                        )
                    } catch {
                        result = .failure(error)
                    }
                    let end = self.state.withLock { $0.workEnded(id) }
                    end.timer?.cancel()
                    if end.answersCaller { continuation.resume(with: result) }
                }
                let timer = Task {
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    let stop = self.state.withLock { $0.abandon(id, because: .deadline) }
                    self.perform(stop, .deadline, operation, timeout: timeout, endpoint: endpoint)
                }
                self.perform(
                    self.state.withLock { $0.workStarted(id, work: work, timer: timer) },
                    .cancelled,
                    operation
                )
            }
        } onCancel: {
            self.perform(self.state.withLock { $0.abandon(id, because: .cancelled) }, .cancelled, operation)
        }
    }

    /// Carries out a stop: the caller answered with the abandonment's error, the work and timer cancelled, the
    /// connection closed.
    private func perform(
        _ stop: Machine.Stop?,
        _ reason: Machine.Abandonment,
        _ operation: String,
        timeout: Duration? = nil,
        endpoint: Configuration.Endpoint? = nil
    ) {
        guard let stop else { return }
        stop.timer?.cancel()
        stop.work?.cancel()
        if let connection = stop.connection { Task { try? await connection.close() } }
        guard let caller = stop.caller else { return }
        switch reason {
        case .cancelled:
            caller(CancellationError())
        case .deadline:
            let timeout = timeout ?? configuration.operationTimeout
            let endpoint = endpoint ?? configuration.endpoint
            caller(
                PostgresFailure(
                    .timedOut,
                    reason: "\(operation) did not finish within \(timeout) (is PostgreSQL at \(endpoint) up?)"
                )
            )
        }
    }

    /// Waits for `tasks` to end, for at most `timeout`, even when the caller is cancelled; whether they all ended.
    /// Tasks still running then go on.
    @discardableResult
    private static func wait(for tasks: [Task<Void, Never>], atMost timeout: Duration) async -> Bool {
        guard !tasks.isEmpty else { return true }
        return await Task.detached {
            let (first, outcome) = AsyncStream<Bool>.makeStream()
            let waiter = Task {
                for task in tasks { await task.value }
                outcome.yield(true)
            }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                outcome.yield(false)
            }
            var iterator = first.makeAsyncIterator()
            let ended = await iterator.next() ?? false
            timer.cancel()
            waiter.cancel()
            return ended
        }.value
    }
}
