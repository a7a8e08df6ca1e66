import KafkaClient
import Logging
import NotificationStore
import Prometheus

/// Publishes a raw-topic partition's outbox rows to the output topics, in row order, and deletes them once the
/// broker acknowledged every one.
///
/// Delivery is at least once: a crash between the acknowledgement and the delete publishes the rows again, with
/// the same event ids, when this member or the next owner of the partition publishes its outbox.
struct OutboxPublisher: Sendable {
    let store: NotificationStore
    let producer: KafkaProducer
    let topics: OutputTopics
    let metrics: WorkerMetrics
    let logger: Logger
    /// Rows read and published at a time.
    var chunk = 500

    /// Publishes everything pending for `partition`; false when something is left (retry later).
    func publishPending(for partition: KafkaTopicPartition) async -> Bool {
        let source = KafkaPartitionReference(topic: partition.topic, partition: partition.partition)
        do {
            while true {
                let rows = try await store.pendingOutbox(source: source, limit: chunk)
                guard !rows.isEmpty else { return true }
                let messages = rows.compactMap { OutputEvent.message(for: $0, topics: topics) }
                let failures = await producer.send(contentsOf: messages).compactMap { result -> KafkaError? in
                    if case .failure(let error) = result { return error }
                    return nil
                }
                if let failure = failures.first {
                    logger.warning(
                        "Output events not acknowledged; the outbox keeps them for the next attempt",
                        metadata: [
                            "kafka.partition": "\(partition)", "error": "\(failure)", "events": "\(failures.count)",
                        ]
                    )
                    return false
                }
                metrics.publishedEvents.increment(by: Int64(messages.count))
                try await store.deleteOutbox(rows.map(\.id))
                if rows.count < chunk { return true }
            }
        } catch {
            logger.warning(
                "Outbox not published; trying again later",
                metadata: ["kafka.partition": "\(partition)", "error": "\(error)"]
            )
            return false
        }
    }
}
