import Testing

@testable import KafkaClient

@Suite("Consumer shutdown")
struct ConsumerShutdownTests {
    /// librdkafka 2.0.2 aborts the process when it destroys a cooperative-sticky member that received its JoinGroup
    /// answer but not yet its first assignment (fixed in 2.2.1). Failing SyncGroup requests hold a member there.
    @Test("A cooperative member closed after joining but before its first assignment shuts down without aborting")
    func closeBeforeFirstAssignment() async throws {
        let cluster = try KafkaTestCluster(topics: ["work": 2])
        cluster.mock.injectErrors(Array(repeating: .rebalanceInProgress, count: 1_000), into: .syncGroup)
        var consumer: KafkaConsumer? = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "joiners", topics: ["work"]),
            logger: cluster.logger
        )
        let joined = try await eventually {
            _ = try await consumer!.poll(maxMessages: 10, maxWait: .milliseconds(50))
            return await consumer!.rebalanceProtocol() == "COOPERATIVE"
        }
        #expect(joined, "the group chose the cooperative assignor")
        #expect(consumer!.assignment.isEmpty, "no assignment came, as SyncGroup keeps failing")
        try await consumer!.close()
        weak let released = consumer
        consumer = nil
        // Released once the executor's last block is (the wait is for that, not for a time).
        #expect(await eventually { released == nil })
    }
}
