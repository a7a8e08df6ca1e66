extension Sequence where Element == KafkaMessage {
    /// The offsets to commit once all these messages are processed: per partition, the highest offset + 1.
    package var nextOffsets: [KafkaTopicPartitionOffset] {
        Dictionary(map { ($0.topicPartition, $0.nextOffset.offset) }, uniquingKeysWith: Swift.max)
            .map { KafkaTopicPartitionOffset($0.key, offset: $0.value) }
            .sorted { $0.topicPartition < $1.topicPartition }
    }
}
