import Foundation
import KafkaClient
import PipelineContract

/// Settings of a ``Worker``.
package struct WorkerConfiguration: Sendable {
    /// The consumer group and the raw topic it reads (``KafkaConsumerConfiguration/topics``).
    package var consumer: KafkaConsumerConfiguration
    /// Messages taken per poll, over all partitions. Default 1,000.
    package var maximumBatchSize = 1_000
    /// How long a poll waits for the first message. Default 200 ms.
    package var maximumWait: Duration = .milliseconds(200)
    /// Partition batches in progress at once (each verifies, then holds a database connection to store). Default 8,
    /// the store's default pool size; more only waits for connections while holding its messages in memory.
    package var maximumConcurrentBatches = 8
    /// Bodies verified at once (verification is pure CPU). Default: the number of cores.
    package var verificationParallelism = ProcessInfo.processInfo.activeProcessorCount
    /// The first pause after a failed batch; doubled per failure up to ``maximumBackoff``, with jitter. Default 250 ms.
    package var initialBackoff: Duration = .milliseconds(250)
    /// The longest pause between attempts at one batch. Default 30 s.
    package var maximumBackoff: Duration = .seconds(30)
    /// Where the outbox is published.
    package var outputTopics = OutputTopics()

    /// Settings reading `consumer`'s topics with the defaults above.
    package init(consumer: KafkaConsumerConfiguration) {
        self.consumer = consumer
    }
}
