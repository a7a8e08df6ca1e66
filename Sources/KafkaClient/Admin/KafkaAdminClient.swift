import CRDKafka
import Logging

/// The few cluster operations the pipeline needs besides producing and consuming: creating topics, and reading
/// partition counts, watermarks and a group's committed offsets (consumer lag, for metrics and autoscaling).
///
/// Every call is a request to the cluster bounded by its `timeout`, run on a thread of the client's own.
package final class KafkaAdminClient: Sendable {
    private let client: RDKafkaClient
    private let executor = BlockingExecutor(label: "asnp.kafka.admin")

    /// Creates the client; fails with ``KafkaError/Code/invalidConfiguration`` for invalid settings.
    package init(cluster: KafkaClusterConfiguration, logger: Logger) throws(KafkaError) {
        var properties = try cluster.properties(managed: [])
        // Asking about a topic must never create it (librdkafka lets producer-type handles do so by default).
        properties["allow.auto.create.topics"] = "false"
        client = try RDKafkaClient.make(
            kind: .producer,
            properties: properties,
            callbacks: RDKafkaCallbacks(logger: logger, oauth: cluster.oauth)
        )
    }

    /// Creates the topics; a topic that already exists counts as created (its settings are not compared).
    ///
    /// Throws ``KafkaError/Code/refused`` naming the topic when the cluster refuses one (invalid settings, not
    /// authorised). librdkafka's mock cluster cannot create topics this way (it has no controller, so the request
    /// ends with ``KafkaError/Code/timedOut``); use ``KafkaMockCluster/createTopic(_:partitions:replicationFactor:)``.
    package func createTopics(_ topics: [KafkaTopicSpecification], timeout: Duration = .seconds(30))
        async throws(KafkaError)
    {
        guard !topics.isEmpty else { return }
        let client = client
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        try await executor.run { () throws(KafkaError) in
            client.servePending()
            var newTopics: [OpaquePointer?] = []
            defer { newTopics.forEach { $0.map { rd_kafka_NewTopic_destroy($0) } } }
            for topic in topics {
                let (created, detail) = RDKafkaErrorText.with { text, size in
                    rd_kafka_NewTopic_new(
                        topic.name,
                        Int32(clamping: topic.partitions),
                        Int32(clamping: topic.replicationFactor),
                        text,
                        size
                    )
                }
                guard let created else { throw .invalidConfiguration("invalid topic '\(topic.name)'", context: detail) }
                newTopics.append(created)
                for (key, value) in topic.configuration.sorted(by: { $0.key < $1.key }) {
                    let result = rd_kafka_NewTopic_set_config(created, key, value)
                    guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
                        throw .rdKafka(result, "invalid setting '\(key)' for topic '\(topic.name)'")
                    }
                }
            }
            try Self.request(
                client,
                RD_KAFKA_ADMIN_OP_CREATETOPICS,
                timeoutMilliseconds: milliseconds,
                what: "create topics"
            ) { options, queue in
                newTopics.withUnsafeMutableBufferPointer {
                    rd_kafka_CreateTopics(client.handle, $0.baseAddress, $0.count, options, queue)
                }
            } result: { event throws(KafkaError) in
                var count = 0
                guard let result = rd_kafka_event_CreateTopics_result(event),
                    let results = rd_kafka_CreateTopics_result_topics(result, &count)
                else { throw KafkaError(code: .brokerError, reason: "the cluster sent no topic creation result") }
                for index in 0..<count {
                    guard let topicResult = results[index] else { continue }
                    let error = rd_kafka_topic_result_error(topicResult)
                    guard error != RD_KAFKA_RESP_ERR_NO_ERROR, error != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS else {
                        continue
                    }
                    var failure = KafkaError.rdKafka(
                        error,
                        "could not create topic '\(String(cString: rd_kafka_topic_result_name(topicResult)))'"
                    )
                    if let text = rd_kafka_topic_result_error_string(topicResult) {
                        failure.context = String(cString: text)
                    }
                    throw failure
                }
            }
        }
    }

    /// The number of partitions of `topic`; throws ``KafkaError/Code/brokerError`` (`UNKNOWN_TOPIC_OR_PART`) when the
    /// cluster has no such topic.
    package func partitionCount(of topic: String, timeout: Duration = .seconds(10)) async throws(KafkaError) -> Int {
        let client = client
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        return try await executor.run { () throws(KafkaError) -> Int in
            client.servePending()
            return try client.partitionCount(of: topic, timeoutMilliseconds: milliseconds)
        }
    }

    /// The low and high watermarks of every partition of `topic` (`rd_kafka_query_watermark_offsets`).
    package func watermarks(of topic: String, timeout: Duration = .seconds(10)) async throws(KafkaError)
        -> [KafkaTopicPartition: (low: Int64, high: Int64)]
    {
        let partitions = try await partitionCount(of: topic, timeout: timeout)
        let client = client
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        return try await executor.run { () throws(KafkaError) -> [KafkaTopicPartition: (low: Int64, high: Int64)] in
            var marks: [KafkaTopicPartition: (low: Int64, high: Int64)] = [:]
            for partition in 0..<Int32(partitions) {
                var low: Int64 = 0
                var high: Int64 = 0
                let result = rd_kafka_query_watermark_offsets(
                    client.handle,
                    topic,
                    partition,
                    &low,
                    &high,
                    milliseconds
                )
                guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
                    throw .rdKafka(result, "could not read the watermarks of \(topic)[\(partition)]")
                }
                marks[KafkaTopicPartition(topic: topic, partition: partition)] = (low, high)
            }
            return marks
        }
    }

    /// The offsets `group` committed for `partitions` (nil where it committed none).
    package func committedOffsets(
        group: String,
        partitions: [KafkaTopicPartition],
        timeout: Duration = .seconds(10)
    ) async throws(KafkaError) -> [KafkaTopicPartition: Int64?] {
        guard !partitions.isEmpty else { return [:] }
        let client = client
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        return try await executor.run { () throws(KafkaError) -> [KafkaTopicPartition: Int64?] in
            client.servePending()
            var committed: [KafkaTopicPartition: Int64?] = [:]
            let request = RDKafkaTopicPartitionList.with(partitions) {
                rd_kafka_ListConsumerGroupOffsets_new(group, $0)
            }
            var requests: [OpaquePointer?] = [request]
            defer { request.map { rd_kafka_ListConsumerGroupOffsets_destroy($0) } }
            try Self.request(
                client,
                RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS,
                timeoutMilliseconds: milliseconds,
                what: "read the committed offsets of group '\(group)'"
            ) { options, queue in
                requests.withUnsafeMutableBufferPointer {
                    rd_kafka_ListConsumerGroupOffsets(client.handle, $0.baseAddress, $0.count, options, queue)
                }
            } result: { event throws(KafkaError) in
                var count = 0
                guard let result = rd_kafka_event_ListConsumerGroupOffsets_result(event),
                    let groups = rd_kafka_ListConsumerGroupOffsets_result_groups(result, &count), count == 1,
                    let groupResult = groups[0]
                else {
                    throw KafkaError(code: .brokerError, reason: "the cluster sent no committed offsets for '\(group)'")
                }
                if let error = rd_kafka_group_result_error(groupResult) {
                    throw KafkaError.rdKafka(copying: error, "could not read the committed offsets of group '\(group)'")
                }
                guard let list = rd_kafka_group_result_partitions(groupResult) else { return }
                if let error = RDKafkaTopicPartitionList.firstError(in: list, "could not read a committed offset") {
                    throw error
                }
                for entry in RDKafkaTopicPartitionList.offsets(of: list) {
                    committed[entry.topicPartition] = entry.offset >= 0 ? .some(entry.offset) : .some(nil)
                }
            }
            return committed
        }
    }

    /// The lag of `group` on every partition of `topic`.
    package func consumerLag(group: String, topic: String, timeout: Duration = .seconds(10)) async throws(KafkaError)
        -> [KafkaPartitionLag]
    {
        let count = try await partitionCount(of: topic, timeout: timeout)
        let partitions = (0..<Int32(count)).map { KafkaTopicPartition(topic: topic, partition: $0) }
        // Committed offsets first, then the watermarks (one request per partition, slow on a busy broker): a group
        // that moves on in between makes the lag read high, never below what was waiting.
        let committed = try await committedOffsets(group: group, partitions: partitions, timeout: timeout)
        let marks = try await watermarks(of: topic, timeout: timeout)
        return marks.keys.sorted().map { partition in
            KafkaPartitionLag(
                topicPartition: partition,
                committedOffset: committed[partition] ?? nil,
                lowWatermark: marks[partition]!.low,
                highWatermark: marks[partition]!.high
            )
        }
    }

    /// Runs one admin request on a queue of its own and hands its result event to `result`.
    private static func request(
        _ client: RDKafkaClient,
        _ operation: rd_kafka_admin_op_t,
        timeoutMilliseconds: Int32,
        what: String,
        send: (OpaquePointer?, OpaquePointer?) -> Void,
        result: (OpaquePointer) throws(KafkaError) -> Void
    ) throws(KafkaError) {
        let queue = rd_kafka_queue_new(client.handle)
        defer { rd_kafka_queue_destroy(queue) }
        let options = rd_kafka_AdminOptions_new(client.handle, operation)
        defer { rd_kafka_AdminOptions_destroy(options) }
        _ = RDKafkaErrorText.with { rd_kafka_AdminOptions_set_request_timeout(options, timeoutMilliseconds, $0, $1) }
        send(options, queue)
        // The request's own timeout answers first; the margin only guards against a lost answer.
        guard let event = rd_kafka_queue_poll(queue, timeoutMilliseconds &+ 1_000) else {
            throw KafkaError(code: .timedOut, reason: "no answer in time to the request to \(what)")
        }
        defer { rd_kafka_event_destroy(event) }
        let error = rd_kafka_event_error(event)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            var failure = KafkaError.rdKafka(error, "the request to \(what) failed")
            if let text = rd_kafka_event_error_string(event) { failure.context = String(cString: text) }
            throw failure
        }
        try result(event)
    }
}
