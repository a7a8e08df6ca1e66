import CRDKafka
import Logging
import NIOCore

/// A member of a Kafka consumer group that hands out messages in batches and leaves every offset decision to the
/// application.
///
/// - Nothing is committed automatically: the application commits explicit offsets with ``commit(_:)`` (waits for
///   the coordinator) or ``commitInBackground(_:)``, after its work is durable.
/// - ``poll(maxMessages:maxWait:)`` (or iterating ``events()``) returns many messages per call, then the group's
///   rebalances that happened meanwhile (``KafkaConsumerEvent``).
/// - A revocation reaches the application **before** the partitions are taken away: they stay assigned until the
///   next poll, so in-flight work can be finished and committed, or abandoned. Both eager and cooperative-sticky
///   protocols work this way.
/// - ``pause(_:)`` and ``resume(_:)`` stop and restart fetching per partition; a resumed partition continues right
///   after the last message handed out, nothing skipped.
///
/// Polls, pause, resume, (un)assign and close run one at a time on a thread of the consumer's own, never on the
/// cooperative pool. Poll from one task; commit from any. Call ``close()`` when done: it leaves the group at once, so the
/// partitions move to other members without waiting for the session timeout. (An open consumer that is released is
/// destroyed without leaving the group, as a crashed process would be.)
package final class KafkaConsumer: Sendable {
    /// The settings the consumer was created with.
    package let configuration: KafkaConsumerConfiguration
    let client: RDKafkaClient
    let state: Locked<StateMachine>
    let commits: Locked<CommitRegistry>
    /// Touched on the executor's thread only; locked to keep the class `Sendable`.
    let expectedOffsets = Locked(ExpectedOffsets())
    let logger: Logger
    let executor = BlockingExecutor(label: "asnp.kafka.consumer")
    /// Set when a test simulates a crash: the release then skips every orderly step.
    private let abandoned = Locked(false)
    private var isCooperative: Bool { configuration.rebalanceProtocol.isCooperative }
    /// How long each of `close()`'s waits for librdkafka's group may last before it goes on anyway.
    private var closingWaitLimit: Duration { min(configuration.sessionTimeout, .seconds(10)) }

    /// Creates the consumer and subscribes it to ``KafkaConsumerConfiguration/topics``. It joins the group at once,
    /// on librdkafka's own thread, so create it when you are about to poll: until then it holds partitions without
    /// serving them. Fails with ``KafkaError/Code/invalidConfiguration`` for invalid settings.
    package init(configuration: KafkaConsumerConfiguration, logger: Logger) throws(KafkaError) {
        let state = Locked(StateMachine())
        let commits = Locked(CommitRegistry())
        self.configuration = configuration
        self.state = state
        self.commits = commits
        self.logger = logger
        let client = try RDKafkaClient.make(
            kind: .consumer,
            properties: configuration.properties(),
            callbacks: RDKafkaCallbacks(
                logger: logger,
                oauth: configuration.cluster.oauth,
                rebalance: Self.rebalanceHandler(
                    state: state,
                    isCooperative: configuration.rebalanceProtocol.isCooperative,
                    logger: logger
                ),
                commit: Self.commitHandler(commits: commits, logger: logger)
            )
        )
        self.client = client
        let subscribeError = RDKafkaTopicPartitionList.with(
            configuration.topics.map { KafkaTopicPartition(topic: $0, partition: RD_KAFKA_PARTITION_UA) }
        ) { list in rd_kafka_subscribe(client.handle, list) }
        if subscribeError != RD_KAFKA_RESP_ERR_NO_ERROR {
            // Never joined: nothing to leave.
            state.withLock { $0.closed() }
            throw .rdKafka(subscribeError, "could not subscribe to \(configuration.topics.joined(separator: ", "))")
        }
    }

    deinit {
        // An open consumer is not closed here: closing talks to the group and runs the rebalance callback, which
        // must not happen on whatever thread drops the last reference (in librdkafka 2.0.2 an unassign from the
        // callback inside rd_kafka_destroy's implicit close can wait forever). It is destroyed as a crashed member
        // would be, and the group moves its partitions after the session timeout.
        if state.withLock({ $0.phase }) != .closed {
            if !abandoned.withLock({ $0 }) {
                logger.warning(
                    "Kafka consumer released without close(); the group moves its partitions after the session timeout",
                    metadata: ["kafka.group": "\(configuration.groupID)"]
                )
            }
            client.destroyWithoutConsumerClose()
        }
        if mustNotDestroy(client.handle) { leaveHandleUndestroyed() }
    }

    /// The partitions this member owns, as of its last poll.
    package var assignment: Set<KafkaTopicPartition> { state.withLock { $0.assignment } }

    /// The owned partitions that are paused.
    package var pausedPartitions: Set<KafkaTopicPartition> { state.withLock { $0.paused } }

    /// The events of this consumer as an asynchronous sequence, each step one ``poll(maxMessages:maxWait:)`` with
    /// the configured ``KafkaConsumerConfiguration/pollBatchSize`` and ``KafkaConsumerConfiguration/pollMaxWait``.
    /// It ends when the consumer is closed or the iterating task is cancelled.
    package func events() -> KafkaConsumerEvents {
        KafkaConsumerEvents(
            consumer: self,
            maxMessages: configuration.pollBatchSize,
            maxWait: configuration.pollMaxWait
        )
    }

    /// Waits up to `maxWait` for the first message, then returns it with every further message already fetched, up
    /// to `maxMessages`, and the rebalances that happened meanwhile (see ``KafkaConsumerEvent``). An empty array
    /// means nothing happened within `maxWait`.
    ///
    /// A revocation returned by the previous poll is carried out first. Throws ``KafkaError/Code/shutDown`` once
    /// closed, ``KafkaError/Code/fatal`` if librdkafka raised a fatal error.
    package func poll(maxMessages: Int, maxWait: Duration) async throws(KafkaError) -> [KafkaConsumerEvent] {
        let maxMessages = max(1, maxMessages)
        let waitMilliseconds = Int32(clamping: maxWait.wholeMilliseconds)
        return try await executor.run { () throws(KafkaError) -> [KafkaConsumerEvent] in
            try self.pollNow(maxMessages: maxMessages, waitMilliseconds: waitMilliseconds)
        }
    }

    /// ``poll(maxMessages:maxWait:)``, or nil once the consumer is closed.
    func pollUnlessClosed(maxMessages: Int, maxWait: Duration) async throws(KafkaError) -> [KafkaConsumerEvent]? {
        do {
            return try await poll(maxMessages: maxMessages, maxWait: maxWait)
        } catch  where error.code == .shutDown {
            return nil
        }
    }

    /// Stops fetching `partitions` until ``resume(_:)``; messages of theirs already fetched but not yet handed out
    /// are dropped by librdkafka and fetched again after resuming. Throws ``KafkaError/Code/invalidState`` for a
    /// partition this member does not own. A revoked partition is no longer paused.
    package func pause(_ partitions: [KafkaTopicPartition]) async throws(KafkaError) {
        try await changePause(partitions, pause: true)
    }

    /// Restarts fetching `partitions` right after the last message handed out for each. Partitions this member no
    /// longer owns are skipped (a revocation already cleared their pause).
    package func resume(_ partitions: [KafkaTopicPartition]) async throws(KafkaError) {
        try await changePause(partitions, pause: false)
    }

    /// Leaves the group: carries out a revocation handed out by the last poll, gives up every partition and tells
    /// the coordinator, so other members take over at once. Finish or abandon in-flight work first: commits the
    /// coordinator answered are kept, and a ``commit(_:)`` still waiting for its answer when the close ends fails
    /// with ``KafkaError/Code/shutDown``. Idempotent.
    package func close() async throws(KafkaError) {
        let client = client
        let state = state
        try await executor.run { () throws(KafkaError) in
            guard state.withLock({ $0.phase }) == .running else { return }
            self.finishFirstJoin()
            let handedOut = state.withLock { state -> [KafkaTopicPartition]? in
                let partitions = state.takeHandedOut()
                state.beginClosing()
                return partitions
            }
            var failure: KafkaError?
            if let handedOut {
                failure = Self.apply(
                    .revoke(handedOut, isLost: false),
                    on: client.handle,
                    isCooperative: self.isCooperative
                )
            }
            self.serveRebalancesBeforeClosing()
            if self.mustNotDestroy(client.handle) { self.leaveHandleUndestroyed() }
            let result = rd_kafka_consumer_close(client.handle)
            state.withLock { $0.closed() }
            // librdkafka drops the commits its group had not sent when it closed, without a callback.
            for waiter in self.commits.withLock({ $0.takeAll() }) {
                waiter.resume(returning: .failure(.shutDown("the consumer closed before the commit was answered")))
            }
            if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                failure = failure ?? .rdKafka(result, "the consumer did not leave its group cleanly")
            }
            if let failure { throw failure }
        }
    }

    /// Simulates a crash, for tests: once released, the consumer is destroyed without leaving the group or giving
    /// up its partitions (as any open consumer is), so the group only notices when its session times out; no warning
    /// is logged.
    func abandonOnRelease() {
        abandoned.withLock { $0 = true }
    }

    /// The rebalance protocol of the group's chosen assignor (`COOPERATIVE`, `EAGER`), or `NONE` before the first
    /// JoinGroup answer; nil once closed.
    func rebalanceProtocol() async -> String? {
        let client = client
        return await executor.run { Self.rebalanceProtocol(of: client.handle) }
    }

    static func rebalanceProtocol(of handle: OpaquePointer) -> String? {
        rd_kafka_rebalance_protocol(handle).map { String(cString: $0) }
    }

    /// librdkafka's own view of the assignment (`rd_kafka_assignment`), for tests of the rebalance hand-over.
    func librdkafkaAssignment() async throws(KafkaError) -> Set<KafkaTopicPartition> {
        let client = client
        return try await executor.run { () throws(KafkaError) -> Set<KafkaTopicPartition> in
            var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
            let result = rd_kafka_assignment(client.handle, &list)
            defer { list.map { rd_kafka_topic_partition_list_destroy($0) } }
            guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw .rdKafka(result, "could not read the assignment")
            }
            return Set(list.map { RDKafkaTopicPartitionList.partitions(of: $0) } ?? [])
        }
    }

    // MARK: - librdkafka 2.0.2's cooperative-sticky destroy abort

    // librdkafka 2.0.2 aborts the process (an assertion in rd_kafka_sticky_assignor_state_destroy) when it destroys a
    // cooperative-sticky member that got its JoinGroup answer but not yet its first assignment: the assignor is
    // chosen, its state is not made yet (fixed in librdkafka 2.2.1). close() first lets such a join finish; a member
    // that still has no assignment is closed but never destroyed, which leaks one handle in a process that is
    // usually exiting, instead of aborting it.

    /// Whether destroying the handle now would hit that abort.
    private func mustNotDestroy(_ handle: OpaquePointer) -> Bool {
        !state.withLock({ $0.everAssigned }) && Self.rebalanceProtocol(of: handle) == "COOPERATIVE"
    }

    private func leaveHandleUndestroyed() {
        logger.warning(
            """
            Kafka consumer closed between joining its group and its first assignment; its librdkafka handle is left \
            to the process's exit, as librdkafka 2.0.2 would abort destroying it
            """,
            metadata: ["kafka.group": "\(configuration.groupID)"]
        )
        client.leakOnRelease()
    }

    /// On the executor's thread, before closing: if the member is between its JoinGroup answer and its first
    /// assignment, poll (dropping any message: nothing is handed out or committed, the next owner reads it) until the
    /// assignment arrives, for at most the session timeout (10 s at most).
    private func finishFirstJoin() {
        guard mustNotDestroy(client.handle) else { return }
        let deadline = ContinuousClock.now.advanced(by: closingWaitLimit)
        while !state.withLock({ $0.everAssigned }), ContinuousClock.now < deadline {
            if let message = rd_kafka_consumer_poll(client.handle, 100) { rd_kafka_message_destroy(message) }
        }
        for rebalance in state.withLock({ $0.takeAnnounced() }) {
            if case .assign = rebalance,
                let error = Self.apply(rebalance, on: client.handle, isCooperative: isCooperative)
            {
                logger.warning("Kafka consumer could not take its first assignment while closing: \(error)")
            }
        }
    }

    // MARK: - On the executor's thread

    /// On the executor's thread, closing: unsubscribes, then polls (dropping any message: nothing is handed out or
    /// committed, the next owner reads it) until a poll finds no rebalance to serve, for at most the session timeout
    /// (10 s at most), so that `rd_kafka_consumer_close` finds none waiting.
    ///
    /// librdkafka 2.0.2's close can wait forever for a rebalance that was announced before it and is served inside
    /// it: the group, terminating, turns the member's (un)assign call into a full unassignment and then waits for a
    /// call that never comes (librdkafka#4527, fixed in 2.5.0). A member that stopped polling while its group
    /// rebalanced holds such a rebalance: one of several members shutting down together, or one that outlived its
    /// poll interval. Served here, before the close, each is an ordinary rebalance; unsubscribing (which leaves the
    /// group once the revocation it announces is served) means no new one follows.
    private func serveRebalancesBeforeClosing() {
        let handle = client.handle
        let result = rd_kafka_unsubscribe(handle)
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
            logger.warning(
                "Kafka consumer could not unsubscribe before closing: \(String(cString: rd_kafka_err2str(result)))"
            )
            return
        }
        let deadline = ContinuousClock.now.advanced(by: closingWaitLimit)
        while ContinuousClock.now < deadline {
            let served = state.withLock { $0.announcements }
            guard let message = rd_kafka_consumer_poll(handle, 100) else {
                if state.withLock({ $0.announcements }) == served { return }
                continue
            }
            rd_kafka_message_destroy(message)
        }
        logger.warning(
            "Kafka consumer still had rebalances to serve after the session timeout; closing anyway",
            metadata: ["kafka.group": "\(configuration.groupID)"]
        )
    }

    private func pollNow(maxMessages: Int, waitMilliseconds: Int32) throws(KafkaError) -> [KafkaConsumerEvent] {
        switch state.withLock({ $0.startPoll() }) {
        case .closed:
            throw .shutDown("the consumer is closed")
        case .fail(let failure):
            throw failure
        case .completeRevocation(let partitions, let paused):
            // Taken back from our state only once librdkafka accepted it, so a failed call is retried next poll.
            if let error = Self.apply(
                .revoke(partitions, isLost: false),
                on: client.handle,
                isCooperative: isCooperative
            ) {
                throw error
            }
            state.withLock { $0.revocationCompleted() }
            if !paused.isEmpty { resumeAfterRevocation(paused) }
        case .poll:
            break
        }
        // Messages of this poll belong to partitions owned before it: rebalances announced meanwhile are applied
        // only afterwards.
        let owned = state.withLock { $0.assignment }
        let (messages, gaps) = try consume(owned: owned, maxMessages: maxMessages, waitMilliseconds: waitMilliseconds)

        var events: [KafkaConsumerEvent] = gaps.map { .offsetGap($0) }
        if !messages.isEmpty { events.append(.messages(messages)) }
        for rebalance in state.withLock({ $0.takeAnnounced() }) {
            switch rebalance {
            case .assign(let partitions):
                if let error = Self.apply(rebalance, on: client.handle, isCooperative: isCooperative) {
                    // The messages taken are still handed out (librdkafka counts them as delivered); the next poll
                    // fails, and the application restarts the consumer.
                    logger.error("Kafka consumer could not take its assigned partitions: \(error)")
                    state.withLock { $0.assignFailed(error, partitions: partitions) }
                    continue
                }
                // Cooperative rebalances that move nothing still need the (empty) assign call, but no event.
                guard !partitions.isEmpty else { continue }
                let committed = committedOffsets(of: partitions)
                expectedOffsets.withLock { $0.assigned(committed) }
                logger.info(
                    "Kafka consumer assigned partitions",
                    metadata: ["kafka.group": "\(configuration.groupID)", "kafka.partitions": "\(partitions.sorted())"]
                )
                events.append(.partitionsAssigned(partitions.sorted()))
            case .revoke(let partitions, let isLost):
                expectedOffsets.withLock { $0.revoked(partitions) }
                logger.info(
                    isLost ? "Kafka consumer lost partitions" : "Kafka consumer giving up partitions",
                    metadata: ["kafka.group": "\(configuration.groupID)", "kafka.partitions": "\(partitions.sorted())"]
                )
                events.append(.partitionsRevoked(.init(partitions: partitions.sorted(), isLost: isLost)))
            }
        }
        return events
    }

    /// Takes up to `maxMessages` messages, waiting up to `waitMilliseconds` for the first only, and copies them out,
    /// with the gaps found before them.
    ///
    /// One `rd_kafka_consumer_poll` per message, not `rd_kafka_consume_batch_queue`: in librdkafka 2.0.2 the batch call
    /// counts a message as delivered when it puts it in the batch, and drops it from the batch if a partition is
    /// paused meanwhile; librdkafka pauses every assigned partition itself during a rebalance, on its own thread,
    /// so a partition the member keeps would resume after the dropped messages and lose them (fixed in 2.1.0). A
    /// single-message poll counts a message only when it is returned. The Swift side still pays one thread hop per
    /// batch, not per message.
    private func consume(
        owned: Set<KafkaTopicPartition>,
        maxMessages: Int,
        waitMilliseconds: Int32
    ) throws(KafkaError) -> (messages: [KafkaMessage], gaps: [KafkaOffsetGap]) {
        var batch: [UnsafeMutablePointer<rd_kafka_message_t>] = []
        batch.reserveCapacity(min(maxMessages, 4_096))
        defer { batch.forEach { rd_kafka_message_destroy($0) } }
        while batch.count < maxMessages,
            let message = rd_kafka_consumer_poll(client.handle, batch.isEmpty ? waitMilliseconds : 0)
        {
            batch.append(message)
        }

        var fatal = false
        var topicNames: [OpaquePointer: String] = [:]
        let buffersPerMessage = configuration.buffersPerMessage
        var byteCount = 0
        if !buffersPerMessage {
            for message in batch where message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                byteCount += RDKafkaMessage.byteCount(of: message)
            }
        }
        var slab = ByteBufferAllocator().buffer(capacity: byteCount)
        var copied: [RDKafkaMessage.Copied] = []
        var messages: [KafkaMessage] = []
        if buffersPerMessage { messages.reserveCapacity(batch.count) } else { copied.reserveCapacity(batch.count) }
        var gaps: [KafkaOffsetGap] = []
        for message in batch {
            let topic = RDKafkaMessage.topicName(of: message, cache: &topicNames)
            let partition = KafkaTopicPartition(topic: topic, partition: message.pointee.partition)
            switch message.pointee.err {
            case RD_KAFKA_RESP_ERR_NO_ERROR:
                if owned.contains(partition) {
                    let offset = message.pointee.offset
                    if let skipped = expectedOffsets.withLock({ $0.received(partition, offset: offset) }),
                        let gap = gap(in: partition, offsets: skipped),
                        let unreported = expectedOffsets.withLock({ $0.unreported(gap) })
                    {
                        gaps.append(unreported)
                    }
                    if buffersPerMessage {
                        var own = ByteBufferAllocator().buffer(capacity: RDKafkaMessage.byteCount(of: message))
                        messages.append(RDKafkaMessage.copy(message, topic: topic, into: &own).message(in: own))
                    } else {
                        copied.append(RDKafkaMessage.copy(message, topic: topic, into: &slab))
                    }
                } else {
                    // Cannot happen while the assignment is tracked right; the message is fetched again by the owner.
                    logger.warning("Kafka consumer dropped a message of a partition it does not own: \(partition)")
                }
            case RD_KAFKA_RESP_ERR__PARTITION_EOF:
                break
            case RD_KAFKA_RESP_ERR__FATAL:
                fatal = true
            case let error:
                // Consumer errors (a subscribed topic missing, a fetch failing) are retried by librdkafka.
                logger.warning(
                    "Kafka consumer error: \(String(cString: rd_kafka_err2str(error)))",
                    metadata: [
                        "rdkafka.error": "\(String(cString: rd_kafka_err2name(error)))",
                        "kafka.partition": "\(partition)",
                    ]
                )
            }
        }
        if fatal {
            throw client.fatalError() ?? KafkaError(code: .fatal, reason: "librdkafka raised a fatal consumer error")
        }
        // Slices are taken once every byte is written: writing to a buffer that slices share would copy it.
        return (buffersPerMessage ? messages : copied.map { $0.message(in: slab) }, gaps)
    }

    /// librdkafka keeps an application's pause on a partition across its unassignment, so a revoked partition that
    /// was paused would come back paused if it were assigned again; it is resumed once no longer assigned.
    private func resumeAfterRevocation(_ partitions: [KafkaTopicPartition]) {
        let failure = RDKafkaTopicPartitionList.with(partitions) { list -> KafkaError? in
            let result = rd_kafka_resume_partitions(client.handle, list)
            return result == RD_KAFKA_RESP_ERR_NO_ERROR
                ? nil : .rdKafka(result, "could not clear a revoked partition's pause")
        }
        if let failure { logger.warning("\(failure)") }
    }

    private func changePause(_ partitions: [KafkaTopicPartition], pause: Bool) async throws(KafkaError) {
        guard !partitions.isEmpty else { return }
        let client = client
        let state = state
        try await executor.run { () throws(KafkaError) in
            // librdkafka would pause any partition it knows of, owned or not; a partition paused while someone else
            // owns it would arrive paused if assigned later.
            let owned = state.withLock { $0.assignment }
            let targets = pause ? partitions : partitions.filter(owned.contains)
            if let unowned = targets.first(where: { !owned.contains($0) }) {
                throw KafkaError(code: .invalidState, reason: "cannot pause \(unowned): this member does not own it")
            }
            guard !targets.isEmpty else { return }
            let failure = RDKafkaTopicPartitionList.with(targets) { list -> KafkaError? in
                let result =
                    pause
                    ? rd_kafka_pause_partitions(client.handle, list) : rd_kafka_resume_partitions(client.handle, list)
                if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                    return .rdKafka(result, pause ? "could not pause partitions" : "could not resume partitions")
                }
                return RDKafkaTopicPartitionList.firstError(
                    in: list,
                    pause ? "could not pause a partition" : "could not resume a partition"
                )
            }
            if let failure { throw failure }
            state.withLock { pause ? $0.paused(targets) : $0.resumed(targets) }
        }
    }
}
