extension PostgresRuntime {
    /// The runtime's operations and its shutdown: pure — no locks, tasks, connections or clock of its own (every call
    /// that records a time is told `now`) — so every transition and interleaving can be tested; ``PostgresRuntime``
    /// holds it in a lock and performs the actions it returns.
    ///
    /// An operation is requested, its caller waits (``callerWaiting(_:caller:)``), its work and its deadline's timer
    /// start (``workStarted(_:work:timer:)``), the work leases a connection and returns it, and the work ends. The
    /// caller is answered exactly once: by the work's end, or earlier by its deadline or its own cancellation, which
    /// also stop the work and close its connection (the only way to stop a statement the server does not answer).
    /// A connection leased by an operation whose caller had its answer is closed at once.
    ///
    /// Shutdown: the operations running then are waited for (their work, answered or not), then the pool closes; no
    /// operation starts once it closes. What the operations still running hold (which connection, for what, since
    /// when) is known here, for a pool that does not end: nobody reads the pool's log for it.
    ///
    /// Generic over the connection, the tasks and the caller, which the tests replace with plain values.
    package struct StateMachine<Connection, Work, Caller> {
        /// Names an operation.
        package typealias OperationID = UInt64

        /// Where the runtime is in its life.
        package enum Lifecycle: Equatable, Sendable {
            /// Operations start.
            case running
            /// Shutting down: the operations running are waited for; new ones still start (the pool is open).
            case draining
            /// The pool is closing or closed: no operation starts.
            case closed
        }

        /// Why a caller is answered before its work ended.
        package enum Abandonment: Equatable, Sendable {
            case deadline
            case cancelled
        }

        /// What ``operationRequested(_:)`` tells the runtime.
        package enum RequestAction: Equatable, Sendable {
            /// Go on with this operation.
            case start(OperationID)
            /// Fail it as shut down: the pool is closed.
            case refuse
        }

        /// What stopping an operation takes; every part may be missing (not started yet, no connection leased yet).
        package struct Stop {
            /// Fail the caller with the abandonment's error.
            package var caller: Caller?
            /// Cancel the work.
            package var work: Work?
            /// Cancel the deadline's timer.
            package var timer: Work?
            /// Close the connection.
            package var connection: Connection?
        }

        /// What the runtime does after the work ended.
        package struct End {
            /// Give the caller the work's outcome; false when it was answered already (a deadline, a cancellation).
            package var answersCaller: Bool
            /// Cancel the deadline's timer.
            package var timer: Work?
        }

        private struct Operation {
            var name: String
            var caller: Caller?
            var work: Work?
            var timer: Work?
            var connection: Connection?
            var connectionID: String?
            var leasedAt: ContinuousClock.Instant?
            /// Why the caller was answered early; nil while it waits (or before it waits).
            var abandoned: Abandonment?
        }

        package private(set) var lifecycle = Lifecycle.running
        private var operations: [OperationID: Operation] = [:]
        private var nextID: OperationID = 0

        package init() {}

        // MARK: - Reading

        /// Operations whose work has not ended, answered or not.
        package var operationsRunning: Int { operations.count }

        /// The connections operations hold now, each with its operation and how long it has held it, longest first;
        /// "none" when none is held.
        package func leases(now: ContinuousClock.Instant) -> String {
            let held = operations.values.compactMap { operation in
                operation.connectionID.flatMap { id in operation.leasedAt.map { (id, operation, $0) } }
            }.sorted { $0.2 < $1.2 }
            guard !held.isEmpty else { return "none" }
            return held.map { id, operation, at in
                let state =
                    operation.abandoned.map { " (\($0 == .deadline ? "past its deadline" : "cancelled"))" } ?? ""
                return "\(id): leased for \(operation.name)\(state) \(at.duration(to: now).components.seconds) s ago"
            }.joined(separator: "; ")
        }

        // MARK: - Events

        /// An operation is asked for.
        package mutating func operationRequested(_ name: String) -> RequestAction {
            guard lifecycle != .closed else { return .refuse }
            nextID += 1
            operations[nextID] = Operation(name: name)
            return .start(nextID)
        }

        /// The operation's caller waits for its answer. If it was cancelled already, the returned stop fails it.
        package mutating func callerWaiting(_ id: OperationID, caller: Caller) -> Stop? {
            guard operations[id] != nil else { return nil }
            guard operations[id]!.abandoned == nil else { return Stop(caller: caller) }
            operations[id]!.caller = caller
            return nil
        }

        /// The operation's work and its deadline's timer started. If its caller had its answer already (cancelled
        /// meanwhile), the returned stop ends them; an operation whose work ended already is gone, and nothing is
        /// recorded.
        package mutating func workStarted(_ id: OperationID, work: Work, timer: Work) -> Stop? {
            guard operations[id] != nil else { return Stop(timer: timer) }
            guard operations[id]!.abandoned == nil else { return Stop(work: work, timer: timer) }
            operations[id]!.work = work
            operations[id]!.timer = timer
            return nil
        }

        /// The work leased `connection` (`connectionID` names it in reports). Returns it if it is to be closed at
        /// once: the caller had its answer already.
        package mutating func connectionLeased(
            _ id: OperationID,
            connection: Connection,
            connectionID: String,
            now: ContinuousClock.Instant
        ) -> Connection? {
            guard operations[id] != nil else { return connection }
            guard operations[id]!.abandoned == nil else { return connection }
            operations[id]!.connection = connection
            operations[id]!.connectionID = connectionID
            operations[id]!.leasedAt = now
            return nil
        }

        /// The work gave its connection back to the pool.
        package mutating func connectionReturned(_ id: OperationID) {
            operations[id]?.connection = nil
            operations[id]?.connectionID = nil
            operations[id]?.leasedAt = nil
        }

        /// The work ended; the operation is over.
        package mutating func workEnded(_ id: OperationID) -> End {
            guard let operation = operations.removeValue(forKey: id) else { return End(answersCaller: false) }
            return End(answersCaller: operation.abandoned == nil, timer: operation.timer)
        }

        /// The operation's deadline passed, or its caller was cancelled: the caller is answered now, the work
        /// stopped and its connection closed. Nil when the operation ended or was answered already.
        package mutating func abandon(_ id: OperationID, because reason: Abandonment) -> Stop? {
            guard var operation = operations[id], operation.abandoned == nil else { return nil }
            operation.abandoned = reason
            let stop = Stop(
                caller: operation.caller,
                work: operation.work,
                timer: reason == .deadline ? nil : operation.timer,
                connection: operation.connection
            )
            operation.caller = nil
            operation.connection = nil
            operations[id] = operation
            return stop
        }

        /// The runtime is to shut down: returns the works to wait for (for at most the drain's limit) before
        /// ``drainEnded()``: those of the operations running now, answered or not.
        package mutating func shutdownRequested() -> [Work] {
            guard lifecycle == .running else { return [] }
            lifecycle = .draining
            return operations.values.compactMap(\.work)
        }

        /// The drain ended (the operations ended, or its limit passed): the pool closes, and no operation starts.
        package mutating func drainEnded() {
            lifecycle = .closed
        }
    }
}
