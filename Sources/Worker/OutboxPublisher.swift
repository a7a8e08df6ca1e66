import KafkaClient
import Logging
import NotificationStore
import PipelineContract
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
        let source = KafkaTopicPartition(topic: partition.topic, partition: partition.partition)
        do {
            while true {
                let rows = try await store.pendingOutbox(source: source, limit: chunk)
                guard !rows.isEmpty else { return true }
                guard try await publish(rows, for: partition) else { return false }
                if rows.count < chunk { return true }
            }
        } catch {
            logFailure(error, for: partition)
            return false
        }
    }

    /// Publishes a batch's outbox rows as its write returned them, without reading the table; only when no older
    /// row of the partition waits (they go first). False when something is left (retry later).
    func publishWritten(_ rows: [OutboxMessage], for partition: KafkaTopicPartition) async -> Bool {
        do {
            return try await publish(rows, for: partition)
        } catch {
            logFailure(error, for: partition)
            return false
        }
    }

    /// Sends `rows` and deletes them once every one was acknowledged; false when some were not.
    private func publish(_ rows: [OutboxMessage], for partition: KafkaTopicPartition) async throws -> Bool {
        let messages = rows.compactMap { $0.outputEvent(topics: topics) }
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
        return true
    }

    private func logFailure(_ error: any Error, for partition: KafkaTopicPartition) {
        logger.warning(
            "Outbox not published; trying again later",
            metadata: ["kafka.partition": "\(partition)", "error": "\(error)"]
        )
    }
}
