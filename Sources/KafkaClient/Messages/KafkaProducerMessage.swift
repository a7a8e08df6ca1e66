import NIOCore

/// A message to produce: topic, optional key (which picks the partition), value and headers.
public struct KafkaProducerMessage: Sendable {
    /// The topic to produce to.
    public var topic: String
    /// The partition key; messages with equal keys go to the same partition, in order.
    public var key: ByteBuffer?
    /// The message payload.
    public var value: ByteBuffer
    /// The record headers, sent in this order.
    public var headers: [KafkaHeader]
    /// A fixed partition, overriding the key's; nil lets the partitioner choose from the key.
    public var partition: Int32?

    /// A message with a binary key, or none; no headers and no fixed partition unless given.
    public init(
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
    public init(
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
public struct KafkaDeliveryReport: Sendable, Hashable {
    /// The topic and partition the message was stored in.
    public var topicPartition: KafkaTopicPartition
    /// The message's offset: its position in the partition.
    public var offset: Int64

    /// A delivery report for a message stored at `offset` in `topicPartition`.
    public init(topicPartition: KafkaTopicPartition, offset: Int64) {
        self.topicPartition = topicPartition
        self.offset = offset
    }
}
