extension GroupCommitWriter {
    /// Which batches each lane's next transaction takes, and when it starts: pure — no locks, continuations or clock
    /// of its own (every call is told `now`) — so every transition and interleaving can be tested;
    /// ``GroupCommitWriter`` holds the batches and their callers, runs the transactions and performs the ``Action``s.
    ///
    /// A lane starts its next transaction as soon as a batch waits, but no sooner than ``interval`` after it started
    /// the previous one, unless a waiting batch is behind or the waiting batches make a whole transaction
    /// (``maximumMessages``). At most ``lanes`` transactions run at once, each taking the oldest waiting batch and
    /// every other that fits beside it. Every batch handed in is answered once: with its transaction's outcome, or
    /// as stopped when the writer stopped before a transaction took it. Order within a partition is the callers'
    /// (one batch of a partition in flight at a time): batches that do not fit are left for a later transaction.
    struct StateMachine {
        /// Names a batch handed in, for its answer.
        struct Ticket: Hashable, Comparable, Sendable {
            var id: Int

            static func < (lhs: Ticket, rhs: Ticket) -> Bool { lhs.id < rhs.id }
        }

        /// What a batch's caller is told.
        enum Answer: Equatable, Sendable {
            /// Its transaction committed.
            case written
            /// Its transaction failed: nothing of it was written.
            case failed
            /// The writer stopped before a transaction took it.
            case stopped
        }

        /// What the writer is to do.
        enum Action: Equatable, Sendable {
            /// Run one transaction of these batches on `lane`, in this order; report its end to
            /// ``writeEnded(lane:succeeded:now:)``.
            case write(lane: Int, [Ticket])
            /// Tell these batches' callers.
            case answer([Ticket], Answer)
            /// Call ``wakeUp(now:)`` then: a lane's interval is over and batches wait for it.
            case wakeUp(at: ContinuousClock.Instant)
        }

        private struct Waiting {
            var ticket: Ticket
            var messages: Int
            var isBehind: Bool
        }

        private struct Lane {
            /// Its next transaction starts no sooner than this, unless it starts now (``startsNow``); nil: at once.
            var notBefore: ContinuousClock.Instant?
            /// The batches of its transaction running.
            var writing: [Ticket]?
        }

        /// At most this many transactions at once.
        let lanes: Int
        /// The most messages a transaction takes, unless one batch alone is larger.
        let maximumMessages: Int
        /// The shortest time between the starts of one lane's transactions (``startsNow`` aside).
        let interval: Duration
        private var laneStates: [Lane]
        private var waiting: [Waiting] = []
        private var nextTicket = 0
        /// The wake-up asked for and not yet come: no other is asked for unless it is sooner.
        private var wakeUpAt: ContinuousClock.Instant?
        /// The lanes were started (``start(now:)``): before, batches wait.
        private(set) var isRunning = false
        private(set) var isStopped = false

        init(lanes: Int, maximumMessages: Int, interval: Duration) {
            self.lanes = max(1, lanes)
            self.maximumMessages = max(1, maximumMessages)
            self.interval = max(.zero, interval)
            self.laneStates = Array(repeating: Lane(), count: self.lanes)
        }

        // MARK: - Reading

        /// Batches handed in and not yet taken by a transaction.
        var waitingBatches: Int { waiting.count }

        /// Lanes waiting out their interval while batches wait.
        var pausingLanes: Int {
            guard isRunning, !isStopped, !waiting.isEmpty else { return 0 }
            return laneStates.count { $0.writing == nil }
        }

        /// Transactions running.
        var writing: Int { laneStates.count { $0.writing != nil } }

        // MARK: - Events

        /// The lanes start: batches handed in before go at once.
        mutating func start(now: ContinuousClock.Instant) -> [Action] {
            guard !isRunning, !isStopped else { return [] }
            isRunning = true
            return startWrites(now: now)
        }

        /// A batch of `messages` handed in; `isBehind`: its partition left messages queued, so its transaction starts
        /// without waiting out the interval. Its ticket names it in the actions.
        mutating func submit(messages: Int, isBehind: Bool, now: ContinuousClock.Instant) -> (Ticket, [Action]) {
            nextTicket += 1
            let ticket = Ticket(id: nextTicket)
            guard !isStopped else { return (ticket, [.answer([ticket], .stopped)]) }
            waiting.append(Waiting(ticket: ticket, messages: messages, isBehind: isBehind))
            return (ticket, startWrites(now: now))
        }

        /// `lane`'s transaction ended: its batches are answered, and the lane takes the next if one is due.
        mutating func writeEnded(lane: Int, succeeded: Bool, now: ContinuousClock.Instant) -> [Action] {
            guard laneStates.indices.contains(lane), let tickets = laneStates[lane].writing else { return [] }
            laneStates[lane].writing = nil
            return [.answer(tickets, succeeded ? .written : .failed)] + startWrites(now: now)
        }

        /// A ``Action/wakeUp(at:)`` came.
        mutating func wakeUp(now: ContinuousClock.Instant) -> [Action] {
            if let wakeUpAt, wakeUpAt <= now { self.wakeUpAt = nil }
            return startWrites(now: now)
        }

        /// The writer stops: waiting batches are answered as stopped, and so is every batch handed in from now on;
        /// running transactions end and are answered as usual.
        mutating func stop() -> [Action] {
            guard !isStopped else { return [] }
            isStopped = true
            wakeUpAt = nil
            defer { waiting = [] }
            return waiting.isEmpty ? [] : [.answer(waiting.map(\.ticket), .stopped)]
        }

        // MARK: - Transitions

        /// Whether the next transaction should start without waiting out the interval: a partition waiting is behind,
        /// or the waiting batches make a whole transaction.
        private var startsNow: Bool {
            waiting.contains(where: \.isBehind) || waiting.reduce(0) { $0 + $1.messages } >= maximumMessages
        }

        /// Starts a transaction on each free lane whose interval is over (any free lane, when ``startsNow``) while
        /// batches wait; when some wait for a lane's interval, asks to be woken when it is over.
        private mutating func startWrites(now: ContinuousClock.Instant) -> [Action] {
            guard isRunning, !isStopped else { return [] }
            var actions: [Action] = []
            while !waiting.isEmpty {
                let free = laneStates.indices.filter { laneStates[$0].writing == nil }
                // The free lane whose interval ended first: it has waited longest.
                guard let lane = free.min(by: { (laneStates[$0].notBefore ?? now) < (laneStates[$1].notBefore ?? now) })
                else { break }
                let notBefore = laneStates[lane].notBefore ?? now
                guard notBefore <= now || startsNow else {
                    if wakeUpAt.map({ notBefore < $0 }) ?? true {
                        wakeUpAt = notBefore
                        actions.append(.wakeUp(at: notBefore))
                    }
                    break
                }
                let group = takeGroup()
                laneStates[lane] = Lane(notBefore: now.advanced(by: interval), writing: group)
                actions.append(.write(lane: lane, group))
            }
            return actions
        }

        /// Takes the first waiting batch and every other that fits beside it, in the order they were handed in.
        private mutating func takeGroup() -> [Ticket] {
            guard let first = waiting.first else { return [] }
            var group = [first.ticket]
            var messages = first.messages
            var left: [Waiting] = []
            for next in waiting.dropFirst() {
                if messages + next.messages <= maximumMessages {
                    group.append(next.ticket)
                    messages += next.messages
                } else {
                    left.append(next)
                }
            }
            waiting = left
            return group
        }
    }
}
