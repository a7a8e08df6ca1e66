extension KafkaProducer {
    /// The producer's bookkeeping: messages awaiting a delivery report, senders waiting for room in librdkafka's
    /// queue, and whether new messages are still taken. Pure; the producer does the I/O its actions ask for.
    ///
    /// Generic over what waits, so it is unit-tested without librdkafka or continuations.
    struct StateMachine<Delivery, RoomWaiter> {
        enum Phase: Equatable {
            /// Taking messages.
            case running
            /// Shutting down: no new messages; waiting for the outstanding ones to be acknowledged.
            case draining
            /// Shut down: nothing outstanding.
            case finished
        }

        private(set) var phase = Phase.running
        /// Messages handed to librdkafka (or about to be), by the id carried as their opaque.
        private var outstanding: [UInt: Delivery] = [:]
        /// Ids start at 1: the id travels as a pointer-sized opaque, and 0 would be a null pointer.
        private var nextID: UInt = 1
        /// Senders that found librdkafka's queue full, oldest first.
        private var roomWaiters: [RoomWaiter] = []
        /// Delivery reports since the waiters were last woken: each frees one place in librdkafka's queue.
        private var freedPlaces = 0
        /// How often a sender had to wait for room, for tests and metrics.
        private(set) var roomWaits = 0

        var outstandingCount: Int { outstanding.count }
        var roomWaiterCount: Int { roomWaiters.count }

        enum RegisterAction {
            /// Hand the message to librdkafka with this id.
            case enqueue(id: UInt)
            /// Fail the delivery at once: the producer is shutting down.
            case fail(Delivery)
        }

        mutating func register(_ delivery: Delivery) -> RegisterAction {
            guard phase == .running else { return .fail(delivery) }
            let id = nextID
            nextID &+= 1
            if nextID == 0 { nextID = 1 }
            outstanding[id] = delivery
            return .enqueue(id: id)
        }

        /// The delivery report for `id` arrived: the delivery to complete (nil if already completed).
        mutating func complete(id: UInt) -> Delivery? {
            guard let delivery = outstanding.removeValue(forKey: id) else { return nil }
            freedPlaces += 1
            return delivery
        }

        /// librdkafka refused the message, so it took no place in the queue: the delivery to fail.
        mutating func refused(id: UInt) -> Delivery? {
            outstanding.removeValue(forKey: id)
        }

        /// The waiters to wake now that the reports served have freed places. Called once librdkafka has returned
        /// from serving them: it frees a report's place only after the report's callback. One freed place wakes one
        /// waiter; with nothing outstanding no further report will come, so every waiter must retry.
        mutating func takeWaitersToWake() -> [RoomWaiter] {
            defer { freedPlaces = 0 }
            let count = outstanding.isEmpty ? roomWaiters.count : min(freedPlaces, roomWaiters.count)
            guard count > 0 else { return [] }
            defer { roomWaiters.removeFirst(count) }
            return Array(roomWaiters.prefix(count))
        }

        enum RoomAction {
            /// Wait: a delivery report will wake the waiter.
            case wait
            /// Retry at once: no report is coming (nothing outstanding) or the producer is shutting down.
            case retryNow(RoomWaiter)
        }

        /// A sender found the queue full and wants to wait for room.
        mutating func waitForRoom(_ waiter: RoomWaiter) -> RoomAction {
            guard phase == .running, !outstanding.isEmpty else { return .retryNow(waiter) }
            roomWaiters.append(waiter)
            roomWaits += 1
            return .wait
        }

        /// Stop taking messages; returns the room waiters, whose retry now fails.
        mutating func beginDraining() -> [RoomWaiter] {
            if phase == .running { phase = .draining }
            defer { roomWaiters.removeAll() }
            return roomWaiters
        }

        /// Shut down; returns the deliveries still outstanding, whose outcome is unknown and which must fail.
        mutating func finish() -> [Delivery] {
            phase = .finished
            defer { outstanding.removeAll() }
            return Array(outstanding.values)
        }
    }
}
