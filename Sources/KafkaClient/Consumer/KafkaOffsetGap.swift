/// Messages a consumer skipped: the offset it expected next on a partition (its committed offset after an
/// assignment, or the one after the last message handed out) was no longer in the partition, so it went on from the
/// oldest one kept.
///
/// On a topic that is neither compacted nor written transactionally, a gap means the messages were deleted (by
/// retention or a size limit) before the group consumed them: they are lost to the group. A jump in offsets that the
/// partition's log start does not explain (compaction, transaction markers) is not reported.
package struct KafkaOffsetGap: Sendable, Hashable, CustomStringConvertible {
    /// Where the messages were.
    package var topicPartition: KafkaTopicPartition
    /// The offsets skipped: from the one expected to the first one received instead.
    package var offsets: Range<Int64>
    /// The partition's oldest offset as last reported by the broker, if known.
    package var logStartOffset: Int64?

    /// A gap of `offsets` in `topicPartition`.
    package init(topicPartition: KafkaTopicPartition, offsets: Range<Int64>, logStartOffset: Int64?) {
        self.topicPartition = topicPartition
        self.offsets = offsets
        self.logStartOffset = logStartOffset
    }

    /// How many offsets were skipped.
    package var count: Int64 { offsets.upperBound - offsets.lowerBound }

    /// `topic[partition] offsets a..<b (n)`.
    package var description: String {
        "\(topicPartition) offsets \(offsets.lowerBound)..<\(offsets.upperBound) (\(count))"
    }
}
