import CRDKafka
import Logging

extension KafkaConsumer {
    /// The offset each owned partition should hand out next, to notice messages skipped because the partition no
    /// longer held them (``KafkaOffsetGap``). librdkafka resets such a partition to `auto.offset.reset` with only a
    /// log line; comparing what arrives with what was expected is what makes the loss visible to the application.
    struct ExpectedOffsets {
        private var next: [KafkaTopicPartition: Int64] = [:]
        /// The offsets reported lost so far per owned partition: a seek back before them (a rewind) skips them again,
        /// and they are not reported twice.
        private var reported: [KafkaTopicPartition: Range<Int64>] = [:]

        /// Starts expecting the committed offsets of newly assigned partitions (nil: none committed, anything goes).
        mutating func assigned(_ committed: [KafkaTopicPartition: Int64?]) {
            for (partition, offset) in committed { next[partition] = offset }
        }

        /// The offset `partition` should hand out next, if known.
        func next(_ partition: KafkaTopicPartition) -> Int64? {
            next[partition]
        }

        mutating func revoked(_ partitions: [KafkaTopicPartition]) {
            for partition in partitions {
                next[partition] = nil
                reported[partition] = nil
            }
        }

        /// `gap` without the offsets already reported for its partition (nil: all were), recorded as reported.
        mutating func unreported(_ gap: KafkaOffsetGap) -> KafkaOffsetGap? {
            let partition = gap.topicPartition
            guard let earlier = reported[partition], gap.offsets.overlaps(earlier) else {
                reported[partition] = gap.offsets
                return gap
            }
            let lower = min(earlier.lowerBound, gap.offsets.lowerBound)
            let upper = max(earlier.upperBound, gap.offsets.upperBound)
            reported[partition] = lower..<upper
            // A rewind skips the same deleted offsets again, from further back: only those before are new.
            guard gap.offsets.lowerBound < earlier.lowerBound else { return nil }
            var new = gap
            new.offsets = gap.offsets.lowerBound..<earlier.lowerBound
            return new
        }

        /// Records a message handed out; returns the offsets skipped before it, if any.
        mutating func received(_ partition: KafkaTopicPartition, offset: Int64) -> Range<Int64>? {
            defer { next[partition] = offset + 1 }
            guard let expected = next[partition], offset > expected else { return nil }
            return expected..<offset
        }
    }

    /// On the executor's thread, after an assignment was applied: the group's committed offsets of `partitions`,
    /// nil for each without one. Asks the coordinator (bounded by the session timeout, at most 10 s); on failure the
    /// partitions are tracked from their first message only, and that is logged.
    func committedOffsets(of partitions: [KafkaTopicPartition]) -> [KafkaTopicPartition: Int64?] {
        let timeout = Int32(clamping: min(configuration.sessionTimeout, .seconds(10)).wholeMilliseconds)
        let result = RDKafkaTopicPartitionList.with(partitions) { list -> [KafkaTopicPartition: Int64?]? in
            guard rd_kafka_committed(client.handle, list, timeout) == RD_KAFKA_RESP_ERR_NO_ERROR,
                RDKafkaTopicPartitionList.firstError(in: list, "") == nil
            else { return nil }
            var committed: [KafkaTopicPartition: Int64?] = [:]
            for entry in RDKafkaTopicPartitionList.offsets(of: list) {
                committed[entry.topicPartition] = entry.offset >= 0 ? .some(entry.offset) : .some(nil)
            }
            return committed
        }
        guard let result else {
            logger.warning(
                """
                Kafka consumer could not read the committed offsets of its new partitions; messages deleted before \
                it read them would go unnoticed this time
                """,
                metadata: ["kafka.group": "\(configuration.groupID)", "kafka.partitions": "\(partitions.sorted())"]
            )
            return Dictionary(uniqueKeysWithValues: partitions.map { ($0, nil) })
        }
        return result
    }

    /// On the executor's thread: a skip of `offsets` in `partition` as a gap, unless the partition's log start (as
    /// the broker last reported it) shows the skipped offsets may still exist (compaction, transaction markers).
    func gap(in partition: KafkaTopicPartition, offsets: Range<Int64>) -> KafkaOffsetGap? {
        var low: Int64 = -1
        var high: Int64 = -1
        let known =
            rd_kafka_get_watermark_offsets(client.handle, partition.topic, partition.partition, &low, &high)
            == RD_KAFKA_RESP_ERR_NO_ERROR && low >= 0
        if known, low <= offsets.lowerBound { return nil }
        return KafkaOffsetGap(topicPartition: partition, offsets: offsets, logStartOffset: known ? low : nil)
    }
}
