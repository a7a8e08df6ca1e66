import KafkaClient

extension RejectedReplay {
    /// What a replay did, for its report.
    package struct Summary: Sendable {
        /// Rows replayed (or that would be), by status.
        package var replayed: [String: Int] = [:]
        /// V1 rows whose body the raw topic no longer holds.
        package var version1Gone: [KafkaTopicPartitionOffset] = []
        package var withoutHeaders = 0

        package init() {}

        package func report(topic: String, dryRun: Bool) -> String {
            let total = replayed.values.reduce(0, +)
            let statuses = replayed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            var lines = [
                "\(dryRun ? "would replay" : "replayed") \(total) rejected notification(s) to \(topic)"
                    + (statuses.isEmpty ? "" : ": \(statuses)")
            ]
            if !version1Gone.isEmpty {
                let examples = version1Gone.prefix(5).map { "\($0.topicPartition) offset \($0.offset)" }
                lines.append(
                    "skipped \(version1Gone.count) V1 notification(s) the raw topic no longer holds (stored with the "
                        + "shared secret redacted, and not in Apple's history): "
                        + examples.joined(separator: ", ") + (version1Gone.count > 5 ? ", ..." : "")
                )
            }
            if withoutHeaders > 0 {
                lines.append(
                    "skipped \(withoutHeaders) without raw-topic headers: nothing tells which app or environment "
                        + "they were for"
                )
            }
            return lines.joined(separator: "\n")
        }
    }
}
