import Foundation
import KafkaClient
import NIOCore
import PipelineContract

/// Settings of a ``Worker``.
package struct WorkerConfiguration: Sendable {
    /// The consumer group and the raw topic it reads (``KafkaConsumerConfiguration/topics``).
    package var consumer: KafkaConsumerConfiguration
    /// Messages taken per poll, over all partitions. Default 1,000.
    package var maximumBatchSize = 1_000
    /// How long a poll waits for the first message. Default 200 ms.
    package var maximumWait: Duration = .milliseconds(200)
    /// Partition batches being verified at once (their bodies sharing ``verificationParallelism`` places): a batch
    /// verified and waiting for its shared transaction makes room for another partition's (so a transaction can take
    /// every partition's batch), one tried again after a failure keeps its place (and a connection) until it ends.
    /// Memory is bounded apart: a partition holds at most its share of two polls. Default 4: with fewer verified at
    /// once each partition's batch gathers more (with the default ``transactionInterval`` at 2,250/s, 8 cost the worker
    /// ~2% more CPU per notification, derived from two comparisons, and 2 cost 1–2% more; Docs/benchmarks.md).
    package var maximumConcurrentBatches = 4
    /// Transactions storing batches at once, each on a connection of its own (``GroupCommitWriter``). Each takes every
    /// partition batch verified while the previous one ran: fewer, larger transactions cost PostgreSQL and the worker
    /// less per notification (with 1 rather than 2, PostgreSQL spent a quarter less CPU per notification at 1,500/s,
    /// Docs/benchmarks.md). Batches written again after a failure go apart, one connection each. Default 1.
    package var maximumConcurrentWrites = 1
    /// The shortest time between the starts of a connection's transactions: partition batches verified meanwhile wait
    /// and join the next one, and the partitions' next batches grow meanwhile; a partition that is behind (its batch
    /// left messages queued) or ``maximumBatchSize`` messages waiting start it at once. A batch waits at most this
    /// long, at low load not at all (the last transaction started longer ago). Default 200 ms: with
    /// ``maximumConcurrentBatches`` 4, 4.5% less worker CPU per notification at 2,250/s than transactions as often as
    /// the database answers (0) with 8, storing not measurably later, and a worker paced at its limit (`asnp-bench
    /// worker`) as fast (Docs/benchmarks.md). 0: as often as the database answers.
    package var transactionInterval: Duration = .milliseconds(200)
    /// Bodies verified at once, over all the batches being verified (verification is pure CPU): each batch is split
    /// into this many runs, and the runs of every batch share this many places (``VerificationSlots``), since the
    /// concurrency runtime's pool has a thread per core of the node whatever a container's CPU limit. Default: the
    /// cores this process may use, a container's CPU limit rounded up (SwiftNIO's `System.coreCount` reads the
    /// cgroup's quota; Foundation's `activeProcessorCount` counts the node's cores whatever the limit).
    package var verificationParallelism = System.coreCount
    /// The first pause after a failed batch; doubled per failure up to ``maximumBackoff``, with jitter. Default 250 ms.
    package var initialBackoff: Duration = .milliseconds(250)
    /// The longest pause between attempts at one batch. Default 30 s.
    package var maximumBackoff: Duration = .seconds(30)
    /// Where the outbox is published.
    package var outputTopics = OutputTopics()
    /// Partitions whose outbox is published at once (each publication holds a database connection only to read and
    /// delete, never while it waits for the broker). Default 4.
    package var maximumConcurrentPublications = 4
    /// The pause before a partition's failed publication is tried again. Default 1 s.
    package var outboxRetryInterval: Duration = .seconds(1)
    /// How often the owned partitions' outbox is looked at for rows this member did not write (a previous owner
    /// finishing a batch after the partition moved). Default 5 s.
    package var outboxSweepInterval: Duration = .seconds(5)
    /// How often the owned partitions' rows of `partition_owners` are read to find a database restored to an earlier
    /// point under the running worker, for partitions receiving nothing (a batch's fence finds it at once; an idle
    /// partition would otherwise be repaired only at its next message). One small read per interval
    /// (`worker.storedOffsetCheckSeconds`). Default 30 s.
    package var storedOffsetCheckInterval: Duration = .seconds(30)
    /// How often the gauges that need PostgreSQL or Kafka are sampled (``WorkerMetricsSampler``). Default 5 s.
    package var metricsSampleInterval: Duration = .seconds(5)
    /// The longest a sample waits for PostgreSQL or Kafka. Default 5 s.
    package var metricsSampleTimeout: Duration = .seconds(5)

    /// Settings reading `consumer`'s topics with the defaults above.
    package init(consumer: KafkaConsumerConfiguration) {
        self.consumer = consumer
    }
}
