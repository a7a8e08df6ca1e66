import CRDKafka
import Logging
import Synchronization

/// The owner of one librdkafka client handle (`rd_kafka_t`), of the queues taken from it, and of the context its C
/// callbacks reach.
///
/// `@unchecked Sendable`: librdkafka documents `rd_kafka_t` and `rd_kafka_queue_t` as thread-safe. The consumer
/// still keeps its polls, pause, resume and (un)assign calls in order on one ``BlockingExecutor`` (see
/// ``KafkaConsumer``).
final class RDKafkaClient: @unchecked Sendable {
    /// The client type.
    enum Kind {
        case producer
        case consumer
    }

    let handle: OpaquePointer
    /// Consumers only: served by librdkafka's background thread; offset-commit results arrive here, so a commit
    /// completes even while nobody polls.
    let backgroundQueue: OpaquePointer?
    /// Retained for as long as the handle exists: librdkafka may call back (logs, a final rebalance during close)
    /// until `rd_kafka_destroy` returns, so the context is released only after it.
    private let context: Unmanaged<RDKafkaCallbacks>
    /// `rd_kafka_destroy_flags` flags for `deinit`; ``KafkaConsumer`` sets `RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE` for a
    /// consumer released without `close()`, which then ends as a crashed member would (no LeaveGroup, no rebalance).
    private let destroyFlags = Atomic<Int32>(0)
    /// Set when destroying the handle would abort the process (librdkafka 2.0.2, see ``KafkaConsumer``): `deinit`
    /// then leaves the handle, its threads and the callbacks' context to the process's exit.
    private let leaked = Atomic<Bool>(false)

    private init(
        handle: OpaquePointer,
        context: Unmanaged<RDKafkaCallbacks>,
        backgroundQueue: OpaquePointer?
    ) {
        self.handle = handle
        self.context = context
        self.backgroundQueue = backgroundQueue
    }

    /// Creates a client with the given properties; `callbacks` decides which C callbacks are installed.
    static func make(
        kind: Kind,
        properties: [String: String],
        callbacks: RDKafkaCallbacks
    ) throws(KafkaError) -> RDKafkaClient {
        let conf = try RDKafkaConfig.make(properties)
        let context = Unmanaged.passRetained(callbacks)
        callbacks.install(on: conf, opaque: context.toOpaque())

        let (created, detail) = RDKafkaErrorText.with { text, size in
            rd_kafka_new(kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER, conf, text, size)
        }
        guard let handle = created else {
            rd_kafka_conf_destroy(conf)
            context.release()
            throw .invalidConfiguration("librdkafka refused the configuration", context: detail)
        }
        if callbacks.oauthBearer != nil, let failure = rd_kafka_sasl_background_callbacks_enable(handle) {
            // Token refreshes served by librdkafka's background thread, whether or not anyone polls the handle.
            let reason = String(cString: rd_kafka_error_string(failure))
            rd_kafka_error_destroy(failure)
            rd_kafka_destroy_flags(handle, Int32(RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE))
            context.release()
            throw .invalidConfiguration("librdkafka could not serve OAUTHBEARER token refreshes", context: reason)
        }
        guard kind == .consumer else {
            return RDKafkaClient(handle: handle, context: context, backgroundQueue: nil)
        }
        // One queue for everything the application serves (messages, rebalances, errors), so a poll serves the
        // rebalance callback in order with the messages.
        rd_kafka_poll_set_consumer(handle)
        guard let backgroundQueue = rd_kafka_queue_get_background(handle) else {
            // A token request may already run for the handle.
            callbacks.oauthBearer?.detach()
            rd_kafka_destroy_flags(handle, Int32(RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE))
            context.release()
            throw .invalidConfiguration("librdkafka could not start the consumer's background thread")
        }
        return RDKafkaClient(handle: handle, context: context, backgroundQueue: backgroundQueue)
    }

    /// The number of partitions of `topic`, from a metadata request (blocks for up to the timeout).
    func partitionCount(of topic: String, timeoutMilliseconds: Int32) throws(KafkaError) -> Int {
        guard let topicHandle = rd_kafka_topic_new(handle, topic, nil) else {
            throw .rdKafka(rd_kafka_last_error(), "invalid topic name '\(topic)'")
        }
        defer { rd_kafka_topic_destroy(topicHandle) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let result = rd_kafka_metadata(handle, 0, topicHandle, &metadata, timeoutMilliseconds)
        defer { metadata.map { rd_kafka_metadata_destroy($0) } }
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata, metadata.pointee.topic_cnt > 0 else {
            throw .rdKafka(result, "could not read the metadata of topic '\(topic)'")
        }
        let entry = metadata.pointee.topics[0]
        guard entry.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw .rdKafka(entry.err, "the cluster has no usable topic '\(topic)'")
        }
        return Int(entry.partition_cnt)
    }

    /// Makes `deinit` skip the consumer close, as a crashed process would.
    func destroyWithoutConsumerClose() {
        destroyFlags.store(Int32(RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE), ordering: .relaxed)
    }

    /// Makes `deinit` leave the handle alone (see `leaked`).
    func leakOnRelease() {
        leaked.store(true, ordering: .relaxed)
    }

    deinit {
        // Queues before the handle, the callbacks' context after it. Our reference to a queue goes even when the
        // handle stays.
        backgroundQueue.map { rd_kafka_queue_destroy($0) }
        // No token request may reach the handle once it is destroyed (nor a leaked one, which nobody uses).
        context.takeUnretainedValue().oauthBearer?.detach()
        guard !leaked.load(ordering: .relaxed) else { return }
        rd_kafka_destroy_flags(handle, destroyFlags.load(ordering: .relaxed))
        context.release()
    }

    /// The fatal error librdkafka raised, if any: the client can no longer keep its guarantees.
    func fatalError() -> KafkaError? {
        let (code, detail) = RDKafkaErrorText.with { rd_kafka_fatal_error(handle, $0, $1) }
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        var error = KafkaError.rdKafka(code, "librdkafka raised a fatal error; the client must be recreated")
        error.code = .fatal
        error.context = detail
        return error
    }

    /// Serves the main queue without waiting (logs and errors of clients that have no poll loop of their own).
    func servePending() {
        rd_kafka_poll(handle, 0)
    }
}
