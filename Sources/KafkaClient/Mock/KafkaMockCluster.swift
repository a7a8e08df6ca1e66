import CRDKafka
import Logging
import Synchronization

/// librdkafka's in-process mock Kafka cluster: real brokers speaking the Kafka protocol on loopback, for `asnp dev`
/// and tests. Any Kafka client (ours, kcat) can connect to ``bootstrapServers``.
///
/// Faults can be injected while clients run: brokers going down and up
/// (``setBrokerDown(_:)``), errors answered to requests (``injectErrors(_:into:)``), added round-trip time
/// (``setRoundTripTime(_:broker:)``).
///
/// Limits of librdkafka 2.0.2's mock, which production Kafka does not have:
/// - It keeps only about **5 MB per partition** and silently deletes older messages (about 4,900 messages of
///   1 KiB); this cannot be configured. Give dev and test topics enough partitions and never let a consumer fall
///   further behind than that.
/// - It does not implement topic creation through the admin API (it reports no controller, so the request times out):
///   use ``createTopic(_:partitions:replicationFactor:)``. It creates any topic a client merely names (in metadata
///   requests, also a consumer's subscription) with 4 partitions, whatever the client's `allow.auto.create.topics`:
///   create topics before clients start.
/// - Everything is in memory and ends with the object.
///
/// The mock's functions hand an operation to its own thread and wait for it (microseconds), so they are synchronous.
package final class KafkaMockCluster: Sendable {
    /// `host:port,...` of the brokers, for `bootstrap.servers`.
    package let bootstrapServers: String
    /// The broker ids, 1 through the number of brokers.
    package let brokerIDs: ClosedRange<Int32>

    /// The client handle the cluster lives in; released after the cluster is destroyed.
    private let owner: RDKafkaClient
    /// `@unchecked Sendable` by way of this wrapper: the mock cluster's functions are thread-safe (they pass an
    /// operation to the mock's thread and wait for its answer).
    private let cluster: MockClusterHandle

    /// Starts a cluster with `brokers` brokers on 127.0.0.1, each on a free port.
    ///
    /// `debug` names librdkafka debug contexts for the cluster's own client handle, whose log is the mock's: `mock`
    /// logs its group coordinator's decisions (joins, leader elections, state changes, session timeouts).
    package init(brokers: Int = 3, logger: Logger, debug: String? = nil) throws(KafkaError) {
        guard (1...32).contains(brokers) else {
            throw .invalidConfiguration("a mock cluster has 1 to 32 brokers, not \(brokers)")
        }
        var properties = ["client.id": "asnp-kafka-mock"]
        if let debug { properties["debug"] = debug }
        owner = try RDKafkaClient.make(
            kind: .producer,
            properties: properties,
            callbacks: RDKafkaCallbacks(logger: logger, oauth: nil)
        )
        let handle = owner.handle
        let created = Self.listenerLock.withLock { _ in
            rd_kafka_mock_cluster_new(handle, Int32(brokers)).map(MockClusterHandle.init(pointer:))
        }
        guard let cluster = created?.pointer else {
            throw KafkaError(code: .mockCluster, reason: "librdkafka could not start a mock cluster (no free ports?)")
        }
        self.cluster = MockClusterHandle(pointer: cluster)
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        brokerIDs = 1...Int32(brokers)
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster.pointer)
    }

    /// A configuration for clients of this cluster.
    package var clusterConfiguration: KafkaClusterConfiguration {
        KafkaClusterConfiguration(bootstrapServers: bootstrapServers)
    }

    /// Creates a topic with `partitions` partitions, each replicated on `replicationFactor` brokers.
    package func createTopic(_ name: String, partitions: Int, replicationFactor: Int = 1) throws(KafkaError) {
        guard !name.isEmpty, partitions > 0, (1...brokerIDs.count).contains(replicationFactor) else {
            throw .invalidConfiguration(
                "a topic needs a name, at least one partition and a replication factor of 1 to \(brokerIDs.count)"
            )
        }
        try check(
            rd_kafka_mock_topic_create(cluster.pointer, name, Int32(partitions), Int32(replicationFactor)),
            "could not create topic '\(name)'"
        )
    }

    /// Takes a broker down: its connections close and it refuses new ones until ``setBrokerUp(_:)``.
    ///
    /// - Warning: librdkafka 2.0.2 re-binds the broker's port at once and aborts the process if another socket took
    ///   it meanwhile (a connection's ephemeral port can). Prefer ``setRoundTripTime(_:broker:)`` (a broker that
    ///   does not answer) or ``injectErrors(_:into:)`` (one that refuses) where the test allows.
    package func setBrokerDown(_ broker: Int32) throws(KafkaError) {
        let id = try known(broker)
        let result = Self.listenerLock.withLock { _ in rd_kafka_mock_broker_set_down(cluster.pointer, id) }
        try check(result, "could not stop broker \(broker)")
    }

    /// Brings a broker back up.
    package func setBrokerUp(_ broker: Int32) throws(KafkaError) {
        let id = try known(broker)
        let result = Self.listenerLock.withLock { _ in rd_kafka_mock_broker_set_up(cluster.pointer, id) }
        try check(result, "could not start broker \(broker)")
    }

    /// Held while librdkafka binds mock listeners. Taking a broker down closes its listener and binds the same port
    /// again at once (librdkafka 2.0.2 asserts that this succeeds); a mock cluster created in that instant could be
    /// given the freed port and abort the process, so creation and down/up never overlap within a process.
    private static let listenerLock = Mutex(())

    /// Adds `roundTripTime` to every answer of `broker` (zero removes it).
    package func setRoundTripTime(_ roundTripTime: Duration, broker: Int32) throws(KafkaError) {
        try check(
            rd_kafka_mock_broker_set_rtt(
                cluster.pointer,
                try known(broker),
                Int32(clamping: roundTripTime.wholeMilliseconds)
            ),
            "could not set the round-trip time of broker \(broker)"
        )
    }

    /// Makes `broker` the leader of `topic`'s `partition`, so that a fault of that broker reaches only the partitions
    /// it leads (the output topics' and not the raw topic's, for instance).
    package func setPartitionLeader(topic: String, partition: Int32, broker: Int32) throws(KafkaError) {
        try check(
            rd_kafka_mock_partition_set_leader(cluster.pointer, topic, partition, try known(broker)),
            "could not make broker \(broker) the leader of \(topic)/\(partition)"
        )
    }

    /// Makes `broker` the coordinator of the consumer group `group`.
    package func setGroupCoordinator(_ group: String, broker: Int32) throws(KafkaError) {
        try check(
            rd_kafka_mock_coordinator_set(cluster.pointer, "group", group, try known(broker)),
            "could not make broker \(broker) the coordinator of group \(group)"
        )
    }

    /// Makes the next requests of kind `api`, on any broker, fail with `errors`, one error per request in order.
    package func injectErrors(_ errors: [BrokerError], into api: API) {
        let codes = errors.map { rd_kafka_resp_err_t($0.rawValue) }
        codes.withUnsafeBufferPointer {
            rd_kafka_mock_push_request_errors_array(cluster.pointer, api.rawValue, $0.count, $0.baseAddress)
        }
    }

    /// Makes the next requests of kind `api` that reach `broker` answer `errors`, one per request in order; these
    /// come before errors injected for every broker. ``BrokerError/none`` answers as usual, as a mark whose use
    /// ``injectedErrorsLeft(for:broker:)`` shows: with ``API/apiVersions``, whether a client connected to the broker.
    package func injectErrors(_ errors: [BrokerError], into api: API, broker: Int32) throws(KafkaError) {
        let id = try known(broker)
        for error in errors {
            try check(
                asnp_mock_broker_push_request_error(
                    cluster.pointer,
                    id,
                    api.rawValue,
                    rd_kafka_resp_err_t(error.rawValue),
                    0
                ),
                "could not inject errors into broker \(broker)"
            )
        }
    }

    /// How many of the errors injected into `broker` for `api` have not been answered yet.
    package func injectedErrorsLeft(for api: API, broker: Int32) throws(KafkaError) -> Int {
        var count = 0
        try check(
            rd_kafka_mock_broker_error_stack_cnt(cluster.pointer, try known(broker), api.rawValue, &count),
            "could not count the errors injected into broker \(broker)"
        )
        return count
    }

    /// Makes every request about `topic` fail with `error` (nil clears it), as a topic deleted or not authorised
    /// would.
    package func setTopicError(_ error: BrokerError?, topic: String) {
        rd_kafka_mock_topic_set_error(cluster.pointer, topic, rd_kafka_resp_err_t(error?.rawValue ?? 0))
    }

    /// Removes errors injected for `api` that have not been answered yet.
    package func clearInjectedErrors(for api: API) {
        rd_kafka_mock_clear_request_errors(cluster.pointer, api.rawValue)
    }

    private func known(_ broker: Int32) throws(KafkaError) -> Int32 {
        guard brokerIDs.contains(broker) else {
            throw .invalidConfiguration(
                "the mock cluster has brokers \(brokerIDs.lowerBound)...\(brokerIDs.upperBound), not \(broker)"
            )
        }
        return broker
    }

    private func check(_ result: rd_kafka_resp_err_t, _ reason: String) throws(KafkaError) {
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
            var error = KafkaError.rdKafka(result, reason)
            error.code = .mockCluster
            throw error
        }
    }
}

/// The mock cluster's C handle. `@unchecked Sendable`: librdkafka's mock functions are thread-safe, and the owner
/// destroys it once, in its `deinit`.
private struct MockClusterHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
