import CRDKafka
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// An idempotent Kafka producer whose ``send(_:)`` returns only once the cluster acknowledged the message.
///
/// Run it as a `Service` (in a `ServiceGroup`, or by calling ``run()``): `run()` serves delivery reports on a
/// thread of its own and, on graceful shutdown or cancellation, stops taking messages, waits up to
/// ``KafkaProducerConfiguration/shutdownFlushTimeout`` for every outstanding one, and fails whatever is left with
/// ``KafkaError/Code/shutDown``. A caller is never told a message was delivered unless the cluster acknowledged it
/// (`acks=all`); a failed send may still have reached the cluster (an acknowledgement lost on the way), which is
/// why consumers deduplicate.
///
/// Many sends may be in flight at once, from any number of tasks, and ``send(contentsOf:)`` hands over a whole
/// batch at once. When librdkafka's local queue is full, sends wait for room rather than failing.
package final class KafkaProducer: Service, Sendable {
    typealias RoomWaiter = CheckedContinuation<Void, Never>

    /// The settings the producer was created with.
    package let configuration: KafkaProducerConfiguration
    private let client: RDKafkaClient
    private let state: Locked<StateMachine<PendingDelivery, RoomWaiter>>
    /// Serves delivery reports (`rd_kafka_poll`) for as long as `run()` runs.
    private let pollExecutor = BlockingExecutor(label: "asnp.kafka.producer.poll")
    /// `rd_kafka_flush`, which must not wait behind the poll loop.
    private let flushExecutor = BlockingExecutor(label: "asnp.kafka.producer.flush")
    /// Metadata requests (readiness checks), which block for up to their timeout.
    private let metadataExecutor = BlockingExecutor(label: "asnp.kafka.producer.metadata")
    private let stopPolling: Locked<Bool>
    private let statisticsTotals: Locked<KafkaProducerStatistics>
    private let logger: Logger

    /// Creates the producer; fails with ``KafkaError/Code/invalidConfiguration`` for invalid settings.
    package init(configuration: KafkaProducerConfiguration, logger: Logger) throws(KafkaError) {
        let state = Locked(StateMachine<PendingDelivery, RoomWaiter>())
        let stopPolling = Locked(false)
        let statisticsTotals = Locked(KafkaProducerStatistics())
        self.state = state
        self.stopPolling = stopPolling
        self.statisticsTotals = statisticsTotals
        self.configuration = configuration
        self.logger = logger
        let statisticsHandler: RDKafkaCallbacks.StatisticsHandler = { json in
            // On the polling thread, every statistics interval.
            do {
                let report = try KafkaProducerStatistics(report: json)
                statisticsTotals.withLock { $0.add(report) }
            } catch {
                logger.warning("librdkafka's statistics report was not read", metadata: ["error": "\(error)"])
            }
        }
        let callbacks = RDKafkaCallbacks(
            logger: logger,
            oauth: configuration.cluster.oauth,
            deliveryReport: { id, error, partition, offset in
                // On the polling thread: complete the waiting send. Senders waiting for room are woken once the poll
                // returns, when librdkafka has freed the report's place.
                guard let delivery = state.withLock({ $0.complete(id: id) }) else { return }
                if error == RD_KAFKA_RESP_ERR_NO_ERROR {
                    delivery.succeed(partition: partition, offset: offset)
                } else {
                    delivery.fail(.rdKafka(error, "the cluster did not acknowledge the message"))
                }
            },
            error: { error, _ in
                // A fatal error (an idempotence guarantee that can no longer be kept) ends the poll loop; run()
                // then fails, so the service group stops and the process is restarted with a new producer.
                if error == RD_KAFKA_RESP_ERR__FATAL { stopPolling.withLock { $0 = true } }
            },
            statistics: configuration.statisticsInterval == nil ? nil : statisticsHandler
        )
        self.client = try RDKafkaClient.make(
            kind: .producer,
            properties: configuration.properties(),
            callbacks: callbacks
        )
    }

    /// How often a sender had to wait for room in librdkafka's queue since the producer started.
    var roomWaits: Int { state.withLock { $0.roomWaits } }

    /// Messages handed to librdkafka and not yet acknowledged or failed (`rd_kafka_outq_len`).
    package var queuedMessages: Int { Int(rd_kafka_outq_len(client.handle)) }

    /// What the producer wrote to each topic since it started, as of librdkafka's latest statistics report; empty
    /// unless ``KafkaProducerConfiguration/statisticsInterval`` is set.
    package var statistics: KafkaProducerStatistics { statisticsTotals.withLock { $0 } }

    /// Produces `message` and returns once the cluster acknowledged it (all in-sync replicas).
    ///
    /// Throws when it was not acknowledged: ``KafkaError/Code/messageTimedOut`` after the delivery timeout (a broker
    /// down, no leader), ``KafkaError/Code/brokerError`` or ``KafkaError/Code/refused`` when the cluster did not
    /// take it, ``KafkaError/Code/queueFull`` when the local queue stayed full for the whole delivery timeout,
    /// ``KafkaError/Code/shutDown`` once the producer is shutting down. Once handed to librdkafka a message cannot be
    /// taken back, so cancelling the calling task does not end the wait for its report.
    @discardableResult
    package func send(_ message: KafkaProducerMessage) async throws(KafkaError) -> KafkaDeliveryReport {
        try await send(contentsOf: [message])[0].get()
    }

    /// Produces every message and returns once each was acknowledged or failed: one result per message, in order.
    ///
    /// Messages with the same key keep their order on the partition. The same guarantees and errors as
    /// ``send(_:)`` apply to each message.
    package func send(contentsOf messages: [KafkaProducerMessage]) async -> [Result<KafkaDeliveryReport, KafkaError>] {
        guard !messages.isEmpty else { return [] }
        let group = DeliveryGroup(count: messages.count)
        let deadline = ContinuousClock.now.advanced(by: configuration.deliveryTimeout)
        for (index, message) in messages.enumerated() {
            await enqueue(
                message,
                as: PendingDelivery(target: .group(group, index: index), topic: message.topic),
                deadline: deadline
            )
        }
        return await group.results()
    }

    /// Produces `message` if librdkafka's queue has room, without waiting for anything: `onDelivery` is then called
    /// once with its outcome, from the thread serving delivery reports (or at once when librdkafka refused the message
    /// or the producer is shutting down), with the same guarantees and errors as ``send(_:)``. Returns false, having
    /// produced nothing and called nothing, when the queue is full: ``send(_:)`` waits for room.
    ///
    /// For callers that wait for many acknowledgements at once and would otherwise need a task for each (the
    /// ingress). `onDelivery` runs on librdkafka's polling thread: it must be quick and must not block.
    package func trySend(
        _ message: KafkaProducerMessage,
        onDelivery: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void
    ) -> Bool {
        produceOnce(message, as: PendingDelivery(target: .callback(onDelivery), topic: message.topic)) == nil
    }

    /// Waits until every message handed over so far is acknowledged or failed, or `timeout` passed (then throws
    /// ``KafkaError/Code/timedOut``).
    package func flush(timeout: Duration) async throws(KafkaError) {
        let client = client
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        let result = await flushExecutor.run { rd_kafka_flush(client.handle, milliseconds) }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw KafkaError.rdKafka(
                result,
                "\(queuedMessages) message(s) still unacknowledged after the flush timeout"
            )
        }
    }

    /// The number of partitions of `topic`, asked of the cluster: a readiness check that the producer reaches a
    /// broker and the topic exists. Throws ``KafkaError/Code/timedOut`` when no broker answered within `timeout`,
    /// ``KafkaError/Code/brokerError`` (`UNKNOWN_TOPIC_OR_PART`) when the topic does not exist.
    package func partitionCount(of topic: String, timeout: Duration) async throws(KafkaError) -> Int {
        let client = client
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        return try await metadataExecutor.run { () throws(KafkaError) -> Int in
            try client.partitionCount(of: topic, timeoutMilliseconds: milliseconds)
        }
    }

    /// Serves delivery reports until graceful shutdown or cancellation, then drains (see the type's summary).
    /// Throws ``KafkaError/Code/fatal`` if librdkafka raised a fatal error.
    package func run() async throws {
        let client = client
        let stopPolling = stopPolling
        let state = state
        await withTaskCancellationOrGracefulShutdownHandler {
            await pollExecutor.run {
                while !stopPolling.withLock({ $0 }) {
                    rd_kafka_poll(client.handle, 100)
                    for waiter in state.withLock({ $0.takeWaitersToWake() }) { waiter.resume() }
                }
            }
        } onCancelOrGracefulShutdown: {
            stopPolling.withLock { $0 = true }
        }
        let fatal = client.fatalError()
        await drain(failingWith: fatal)
        if let fatal { throw fatal }
    }

    // MARK: - Internals

    /// Hands `message` to librdkafka, waiting for room while its queue is full. Every outcome goes to `pending`:
    /// a delivery report later, or a failure now.
    private func enqueue(
        _ message: KafkaProducerMessage,
        as pending: PendingDelivery,
        deadline: ContinuousClock.Instant
    ) async {
        while let full = produceOnce(message, as: pending) {
            guard ContinuousClock.now < deadline else {
                pending.fail(
                    KafkaError(
                        code: .queueFull,
                        reason: "librdkafka's queue stayed full for the whole delivery timeout",
                        rdKafkaError: full.rdKafkaError
                    )
                )
                return
            }
            await waitForRoom()
        }
    }

    /// Hands `message` to librdkafka once. Returns nil when `pending` got its outcome or a delivery report will
    /// give it; returns the queue-full error, with `pending` untouched, when librdkafka's queue has no room.
    private func produceOnce(_ message: KafkaProducerMessage, as pending: PendingDelivery) -> KafkaError? {
        let id: UInt
        switch state.withLock({ $0.register(pending) }) {
        case .fail(let pending):
            pending.fail(.shutDown("the producer is shutting down"))
            return nil
        case .enqueue(let registered):
            id = registered
        }
        guard let error = produce(message, id: id) else { return nil }
        // librdkafka did not take it, so no report will come: complete it here (and if that leaves nothing
        // outstanding, no report will wake the waiters either).
        let (delivery, wake) = state.withLock { ($0.refused(id: id), $0.takeWaitersToWake()) }
        for waiter in wake { waiter.resume() }
        // nil: the shutdown failed it meanwhile.
        guard let delivery else { return nil }
        guard error.code == .queueFull else {
            delivery.fail(error)
            return nil
        }
        return error
    }

    /// Waits until a delivery report frees a place in librdkafka's queue (or at once if none is coming).
    private func waitForRoom() async {
        await withCheckedContinuation { (waiter: RoomWaiter) in
            if case .retryNow(let waiter) = state.withLock({ $0.waitForRoom(waiter) }) {
                waiter.resume()
            }
        }
    }

    /// Stops taking messages, waits for the outstanding ones, fails what is left.
    private func drain(failingWith fatal: KafkaError?) async {
        for waiter in state.withLock({ $0.beginDraining() }) { waiter.resume() }
        let client = client
        let outstanding = queuedMessages
        if outstanding > 0 {
            logger.info(
                "Kafka producer shutting down: waiting for messages to be acknowledged",
                metadata: ["kafka.outstanding": "\(outstanding)"]
            )
        }
        do {
            if fatal == nil { try await flush(timeout: configuration.shutdownFlushTimeout) }
        } catch {
            logger.error("Kafka producer shutdown: \(error); failing the unacknowledged messages")
        }
        // Purged messages get a delivery report with a purge error, served by this last flush.
        await flushExecutor.run {
            rd_kafka_purge(client.handle, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
            rd_kafka_flush(client.handle, 1_000)
        }
        let error = fatal ?? .shutDown("the producer shut down before the message was acknowledged")
        for delivery in state.withLock({ $0.finish() }) {
            delivery.fail(error)
        }
    }

    /// Hands the message to librdkafka (which copies it); nil when it took it and a delivery report will follow.
    private func produce(_ message: KafkaProducerMessage, id: UInt) -> KafkaError? {
        // librdkafka takes ownership of the header list only when it accepts the message; none is made without
        // headers.
        let headers = message.headers.isEmpty ? nil : rd_kafka_headers_new(message.headers.count)
        for header in message.headers {
            // withCString, not the implicit conversion, which allocates a copy of every short (inline) key.
            header.key.withCString { key in
                if let value = header.value {
                    value.withUnsafeReadableBytes { bytes in
                        _ = rd_kafka_header_add(headers, key, -1, bytes.baseAddress, bytes.count)
                    }
                } else {
                    _ = rd_kafka_header_add(headers, key, -1, nil, 0)
                }
            }
        }
        let error: OpaquePointer? = message.topic.withCString { topic in
            message.value.withUnsafeReadableBytes { value in
                Self.withOptionalBytes(message.key) { key in
                    // On the stack: this runs once per message.
                    withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 7) { values in
                        var count = 0
                        func add(_ type: rd_kafka_vtype_t, _ set: (inout rd_kafka_vu_t) -> Void) {
                            var entry = rd_kafka_vu_t()
                            entry.vtype = type
                            set(&entry)
                            values.initializeElement(at: count, to: entry)
                            count += 1
                        }
                        add(RD_KAFKA_VTYPE_TOPIC) { $0.u.cstr = topic }
                        add(RD_KAFKA_VTYPE_VALUE) {
                            $0.u.mem = .init(
                                ptr: UnsafeMutableRawPointer(mutating: value.baseAddress),
                                size: value.count
                            )
                        }
                        if let key {
                            add(RD_KAFKA_VTYPE_KEY) {
                                $0.u.mem = .init(
                                    ptr: UnsafeMutableRawPointer(mutating: key.baseAddress),
                                    size: key.count
                                )
                            }
                        }
                        if let headers { add(RD_KAFKA_VTYPE_HEADERS) { $0.u.headers = headers } }
                        add(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = UnsafeMutableRawPointer(bitPattern: id) }
                        add(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
                        add(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = message.partition ?? RD_KAFKA_PARTITION_UA }
                        defer { values.baseAddress!.deinitialize(count: count) }
                        return rd_kafka_produceva(client.handle, values.baseAddress, count)
                    }
                }
            }
        }
        guard let error else { return nil }
        headers.map { rd_kafka_headers_destroy($0) }
        return KafkaError.rdKafka(consuming: error, "librdkafka did not take the message")
    }

    private static func withOptionalBytes<T>(_ buffer: ByteBuffer?, _ body: (UnsafeRawBufferPointer?) -> T) -> T {
        guard let buffer else { return body(nil) }
        return buffer.withUnsafeReadableBytes { body($0) }
    }
}
