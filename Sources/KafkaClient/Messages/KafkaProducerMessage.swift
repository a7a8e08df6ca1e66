import NIOCore

/// A message to produce: topic, optional key (which picks the partition), value and headers.
package struct KafkaProducerMessage: Sendable {
    /// The topic to produce to.
    package var topic: String
    /// The partition key; messages with equal keys go to the same partition, in order.
    package var key: ByteBuffer?
    /// The message payload.
    package var value: ByteBuffer
    /// The record headers, sent in this order.
    package var headers: [KafkaHeader]
    /// A fixed partition, overriding the key's; nil lets the partitioner choose from the key.
    package var partition: Int32?

    /// A message with a binary key, or none; no headers and no fixed partition unless given.
    package init(
        topic: String,
        key: ByteBuffer? = nil,
        value: ByteBuffer,
        headers: [KafkaHeader] = [],
        partition: Int32? = nil
    ) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
        self.partition = partition
    }

    /// A message with a UTF-8 string key.
    package init(
        topic: String,
        key: String,
        value: ByteBuffer,
        headers: [KafkaHeader] = [],
        partition: Int32? = nil
    ) {
        self.init(topic: topic, key: ByteBuffer(string: key), value: value, headers: headers, partition: partition)
    }
}

/// Where the cluster stored an acknowledged message.
package struct KafkaDeliveryReport: Sendable, Hashable {
    /// The topic and partition the message was stored in.
    package var topicPartition: KafkaTopicPartition
    /// The message's offset: its position in the partition.
    package var offset: Int64

    /// A delivery report for a message stored at `offset` in `topicPartition`.
    package init(topicPartition: KafkaTopicPartition, offset: Int64) {
        self.topicPartition = topicPartition
        self.offset = offset
    }
}
