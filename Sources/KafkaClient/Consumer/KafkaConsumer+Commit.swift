import CRDKafka
import Logging

extension KafkaConsumer {
    /// Commits waiting for the coordinator's answer, by the id passed to librdkafka as the commit's opaque.
    struct CommitRegistry {
        typealias Waiter = CheckedContinuation<Result<Void, KafkaError>, Never>

        /// 0 marks a background commit nobody waits for.
        private var nextID: UInt = 1
        private var waiting: [UInt: Waiter] = [:]

        mutating func register(_ waiter: Waiter) -> UInt {
            let id = nextID
            nextID &+= 1
            if nextID == 0 { nextID = 1 }
            waiting[id] = waiter
            return id
        }

        mutating func complete(id: UInt) -> Waiter? {
            waiting.removeValue(forKey: id)
        }

        /// Every commit still waiting, taken out.
        mutating func takeAll() -> [Waiter] {
            defer { waiting.removeAll() }
            return Array(waiting.values)
        }
    }

    /// The commit callback's work, on librdkafka's background thread: hand the result to whoever waits, or log it.
    static func commitHandler(commits: Locked<CommitRegistry>, logger: Logger) -> RDKafkaCallbacks.CommitHandler {
        { id, code, list in
            let result = commitResult(code, list)
            if let waiter = commits.withLock({ $0.complete(id: id) }) {
                waiter.resume(returning: result)
            } else if case .failure(let error) = result {
                logger.warning("Kafka background offset commit failed: \(error)")
            }
        }
    }

    static func commitResult(
        _ code: rd_kafka_resp_err_t,
        _ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
    ) -> Result<Void, KafkaError> {
        if code != RD_KAFKA_RESP_ERR_NO_ERROR {
            return .failure(.rdKafka(code, "the group coordinator did not commit the offsets"))
        }
        if let list, let error = RDKafkaTopicPartitionList.firstError(in: list, "the offset commit failed") {
            return .failure(error)
        }
        return .success(())
    }

    /// Commits `offsets` (each the **next** offset to read: last processed + 1) and returns once the group
    /// coordinator stored them.
    ///
    /// Does not wait for a poll: the answer is served by librdkafka's background thread. Throws
    /// ``KafkaError/Code/rebalanced`` when the group moved on (the partitions may belong to another member now),
    /// ``KafkaError/Code/brokerError`` or ``KafkaError/Code/timedOut`` when the coordinator could not be reached
    /// (retry), ``KafkaError/Code/shutDown`` after ``close()``.
    package func commit(_ offsets: [KafkaTopicPartitionOffset]) async throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        let result: Result<Void, KafkaError> = await withCheckedContinuation { waiter in
            let id = commits.withLock { $0.register(waiter) }
            if let error = startCommit(offsets, id: id), let waiter = commits.withLock({ $0.complete(id: id) }) {
                waiter.resume(returning: .failure(error))
            }
        }
        try result.get()
    }

    /// Starts committing `offsets` and returns at once; a failure is logged. A later commit of the same partitions
    /// supersedes this one, so this suits periodic progress commits; use ``commit(_:)`` where the caller must know.
    package func commitInBackground(_ offsets: [KafkaTopicPartitionOffset]) {
        guard !offsets.isEmpty else { return }
        if let error = startCommit(offsets, id: 0) {
            logger.warning("Kafka background offset commit not started: \(error)")
        }
    }

    /// Hands a commit to librdkafka; nil when it took it and the callback will report the outcome.
    private func startCommit(_ offsets: [KafkaTopicPartitionOffset], id: UInt) -> KafkaError? {
        guard state.withLock({ $0.phase }) != .closed else {
            return .shutDown("the consumer is closed; its offsets can no longer be committed")
        }
        let client = client
        return RDKafkaTopicPartitionList.with(offsets: offsets) { list in
            let result = rd_kafka_commit_queue(
                client.handle,
                list,
                client.backgroundQueue,
                rdKafkaCommitCallback,
                UnsafeMutableRawPointer(bitPattern: id)
            )
            return result == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : .rdKafka(result, "librdkafka did not start the commit")
        }
    }
}
