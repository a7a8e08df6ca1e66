import Foundation
import KafkaClient
import Logging
import NotificationStore
import ServiceLifecycle

/// A member of the worker consumer group: polls the raw topic in batches, verifies each partition's messages,
/// writes them to PostgreSQL in one transaction per partition batch, commits the partition's offsets only after
/// that transaction committed, then publishes the batch's outbox rows to the output topics.
///
/// The outbox makes publishing crash-safe: rows are written in the batch's transaction and deleted only once the
/// broker acknowledged their events. A member publishes a partition's leftover rows when it is assigned the
/// partition, after a batch fails (its COMMIT may have gone through) and, while publishing fails, every second.
///
/// A batch that fails (database unavailable, a verification to retry, anything else) is never skipped: its partition
/// is paused, the same messages are tried again after a growing, jittered pause, and no offset moves past them.
/// Other partitions go on. On a revocation the member finishes (or, for lost partitions, abandons) their pending
/// work before it polls again, so the partitions move with everything committed. Run it as a `Service`; on graceful
/// shutdown it finishes the batch in hand and leaves the group.
public final class Worker: Service, Sendable {
    public let configuration: WorkerConfiguration
    private let store: NotificationStore
    private let verifier: RawBatchVerifier
    private let publisher: OutboxPublisher
    private let logger: Logger

    /// - Parameter producer: produces the output topics; run it in the same `ServiceGroup`, before the worker, so it
    ///   flushes after the worker stopped.
    public init(
        configuration: WorkerConfiguration,
        verifiers: VerifierDirectory,
        store: NotificationStore,
        producer: KafkaProducer,
        logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.verifier = RawBatchVerifier(directory: verifiers, parallelism: configuration.verificationParallelism)
        self.publisher = OutboxPublisher(
            store: store,
            producer: producer,
            topics: configuration.outputTopics,
            logger: logger
        )
        self.logger = logger
        for unavailable in verifiers.unavailable {
            logger.warning("\(unavailable.reason); such notifications are stored as rejected (\(unavailable.status))")
        }
    }

    /// Consumes until graceful shutdown or cancellation, then leaves the group.
    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: configuration.consumer, logger: logger)
        var partitions = PartitionQueues(configuration: configuration)
        var outbox = UnpublishedPartitions()
        do {
            while !Task.isCancelled, !Task.isShuttingDownGracefully {
                let events = try await consumer.poll(
                    maxMessages: configuration.maximumBatchSize,
                    maxWait: configuration.maximumWait
                )
                for event in events {
                    switch event {
                    case .messages(let messages):
                        partitions.append(messages)
                    case .partitionsAssigned(let assigned):
                        logger.info("Partitions assigned", metadata: ["kafka.partitions": "\(assigned.sorted())"])
                        // A previous owner may have stored batches whose events it did not publish.
                        outbox.mark(assigned)
                    case .partitionsRevoked(let revocation):
                        // Lost partitions already belong to another member: their work is abandoned uncommitted.
                        // Revoked ones are finished now, before the next poll hands them over.
                        if !revocation.isLost {
                            let outcomes = await process(
                                partitions.take(revocation.partitions, ignoringBackoff: true),
                                consumer
                            )
                            outbox.mark(outcomes.unpublished)
                            await outbox.publish(revocation.partitions, with: publisher)
                        }
                        partitions.drop(revocation.partitions)
                        outbox.forget(revocation.partitions)
                    }
                }
                let outcomes = await process(partitions.takeReady(), consumer)
                for batch in outcomes.failed { partitions.requeue(batch) }
                outbox.mark(outcomes.unpublished)
                if outbox.isDue {
                    await outbox.publish(Array(consumer.assignment), with: publisher)
                }
                try await partitions.applyPauses(consumer)
            }
            // Graceful shutdown: one last try at what is in hand; the rest is redelivered to the next owner.
            let outcomes = await process(partitions.take(partitions.partitions, ignoringBackoff: true), consumer)
            outbox.mark(outcomes.unpublished)
            await outbox.publish(Array(consumer.assignment), with: publisher)
        } catch {
            try? await consumer.close()
            throw error
        }
        try await consumer.close()
    }

    /// What became of a round of batches.
    struct Outcomes {
        /// Batches not stored, to retry.
        var failed: [PartitionBatch] = []
        /// Partitions whose outbox may hold rows not yet published.
        var unpublished: [KafkaTopicPartition] = []
    }

    /// Processes the partitions' batches at once.
    private func process(_ batches: [PartitionBatch], _ consumer: KafkaConsumer) async -> Outcomes {
        await withTaskGroup(of: (PartitionBatch, stored: Bool, published: Bool).self) { group in
            for batch in batches {
                group.addTask {
                    guard await self.process(batch, consumer) else {
                        // A failed write may have committed after all: its events wait in the outbox.
                        return (batch, false, false)
                    }
                    return (batch, true, await self.publisher.publishPending(for: batch.partition))
                }
            }
            var outcomes = Outcomes()
            for await (batch, stored, published) in group {
                if !stored { outcomes.failed.append(batch) }
                if !published { outcomes.unpublished.append(batch.partition) }
            }
            return outcomes
        }
    }

    /// Verifies, stores and commits one partition's batch; false when it must be tried again.
    private func process(_ batch: PartitionBatch, _ consumer: KafkaConsumer) async -> Bool {
        var logger = logger
        logger[metadataKey: "kafka.partition"] = "\(batch.partition)"
        do {
            let notifications = try await verifier.batch(for: batch.messages)
            let result = try await store.write(notifications)
            logger.debug(
                "Batch stored",
                metadata: [
                    "batch.size": "\(batch.messages.count)",
                    "notifications.new": "\(result.storedNotifications.count)",
                    "notifications.duplicate": "\(result.duplicateNotifications)",
                    "rejected.new": "\(result.storedRejections)",
                ]
            )
        } catch {
            logger.warning(
                "Batch not stored; pausing the partition and trying the same batch again",
                metadata: ["error": "\(error)", "batch.attempt": "\(batch.attempts + 1)"]
            )
            return false
        }
        do {
            try await consumer.commit([batch.nextOffset])
        } catch {
            // Stored but not committed: the messages come again (to this member or the next owner) and are
            // recognised as duplicates. Never a reason to store them twice or to retry here.
            logger.notice(
                "Offsets not committed; the stored batch will be redelivered",
                metadata: ["error": "\(error)"]
            )
        }
        return true
    }
}
