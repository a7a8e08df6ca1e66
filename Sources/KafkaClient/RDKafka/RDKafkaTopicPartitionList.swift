import CRDKafka

/// Conversions between librdkafka partition lists and Swift values. Lists are created and destroyed within one
/// call; no pointer outlives it.
enum RDKafkaTopicPartitionList {
    /// Runs `body` with a new list of the given partitions (offset `RD_KAFKA_OFFSET_INVALID`: "use the committed").
    static func with<T>(
        _ partitions: some Collection<KafkaTopicPartition>,
        _ body: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) throws -> T
    ) rethrows -> T {
        try with(
            offsets: partitions.map { KafkaTopicPartitionOffset($0, offset: Int64(RD_KAFKA_OFFSET_INVALID)) },
            body
        )
    }

    /// Runs `body` with a new list of the given partitions and offsets.
    static func with<T>(
        offsets: some Collection<KafkaTopicPartitionOffset>,
        _ body: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) throws -> T
    ) rethrows -> T {
        let list = rd_kafka_topic_partition_list_new(Int32(clamping: max(offsets.count, 1)))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for entry in offsets {
            let element = rd_kafka_topic_partition_list_add(
                list,
                entry.topicPartition.topic,
                entry.topicPartition.partition
            )!
            element.pointee.offset = entry.offset
        }
        return try body(list)
    }

    /// The list's entries as Swift values.
    static func offsets(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [KafkaTopicPartitionOffset] {
        (0..<Int(list.pointee.cnt)).map { index in
            let element = list.pointee.elems[index]
            return KafkaTopicPartitionOffset(
                topic: String(cString: element.topic),
                partition: element.partition,
                offset: element.offset
            )
        }
    }

    /// The list's partitions as Swift values.
    static func partitions(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [KafkaTopicPartition] {
        offsets(of: list).map(\.topicPartition)
    }

    /// The first per-partition error in the list, if any, as a ``KafkaError`` naming the partition.
    static func firstError(in list: UnsafePointer<rd_kafka_topic_partition_list_t>, _ reason: String) -> KafkaError? {
        for index in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[index]
            if element.err != RD_KAFKA_RESP_ERR_NO_ERROR {
                let partition = KafkaTopicPartition(topic: String(cString: element.topic), partition: element.partition)
                return .rdKafka(element.err, "\(reason) (\(partition))")
            }
        }
        return nil
    }
}
