import KafkaClient

/// What `asnp-bench soak` read from the output topics (its SoakOutputLog): what the checks judge.
package struct SoakOutputContents: Sendable {
    /// A decoded event: its key and `ce_id`.
    package struct Event: Sendable, Equatable {
        package var key: String
        package var id: String

        package init(key: String, id: String) {
            self.key = key
            self.id = id
        }
    }

    /// Decoded events per partition, in offset order.
    package var decoded: [Int32: [Event]] = [:]
    /// The state topic's last value per key (the row as JSON).
    package var lastState: [String: String] = [:]
    package var stateEvents = 0
    /// Every dead letter's `ce_id` (`<topic>/<partition>/<offset>` of the rejected message), with repeats.
    package var deadLetters: [String] = []
    /// Ranges the mock deleted before they were read, e.g. `appstore.notifications.decoded[3] 0..<120`.
    package var unread: [String] = []
    /// Per partition, the next offset to read.
    package var next: [KafkaTopicPartition: Int64] = [:]

    package init() {}
}
