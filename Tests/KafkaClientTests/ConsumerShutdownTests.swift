import AppStoreTestSupport
import Logging
import Testing

@testable import KafkaClient

@Suite("Consumer shutdown", .tags(.pipeline))
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

    /// librdkafka 2.0.2 can hang in rd_kafka_consumer_close when a rebalance announced before the close still waits
    /// for the member's (un)assign call (librdkafka#4527, fixed in 2.5.0). A member that stopped polling while its
    /// group rebalanced holds one: a worker does when the members of its group shut down together. This drives that
    /// state; the hang's timing it cannot: a run of an earlier form of this test (the member's poll interval running
    /// out too) hung in the close before the consumer served such rebalances ahead of it.
    @Test(
        "A member that stopped polling while its group rebalanced closes without hanging",
        arguments: [KafkaConsumerConfiguration.RebalanceProtocol.cooperativeSticky, .eagerRange]
    )
    func closeWithRebalanceWaiting(rebalanceProtocol: KafkaConsumerConfiguration.RebalanceProtocol) async throws {
        let cluster = try KafkaTestCluster(topics: ["work": 4])
        var configuration = cluster.consumerConfiguration(
            group: "leavers",
            topics: ["work"],
            rebalanceProtocol: rebalanceProtocol
        )
        let b = try KafkaConsumer(configuration: configuration, logger: cluster.logger)
        // A's group events, from librdkafka's debug log: the only sign of a rebalance that waits for a poll.
        let groupLog = LogLines()
        configuration.cluster.additionalProperties["debug"] = "cgrp"
        // A does not poll from here on: it stays in the group until its close, however long B's leaving takes on a
        // loaded machine (a member whose poll interval ran out leaves on its own, and no rebalance waits for it).
        configuration.maxPollInterval = configuration.sessionTimeout * 20
        var logger = Logger(label: "test.kafka.leaver") { _ in groupLog.handler(level: .debug) }
        logger.logLevel = .debug
        let a = try KafkaConsumer(configuration: configuration, logger: logger)
        // Until A's group is steady too: a cooperative rebalance has two rounds, and A may hold the two members' shares
        // while its second round still waits for a poll (a busy run then saw no rebalance come for B's leaving).
        let shared = try await eventually {
            _ = try await a.poll(maxMessages: 10, maxWait: .milliseconds(50))
            _ = try await b.poll(maxMessages: 10, maxWait: .milliseconds(50))
            let joinStates = groupLog.all.filter { $0.contains("changed join state") }
            return a.assignment.count == 2 && b.assignment.count == 2
                && joinStates.last?.contains("-> steady") == true
        }
        #expect(
            shared,
            """
            the two members share the 4 partitions, A's group steady; A's group log ends:
            \(groupLog.all.filter { !$0.contains("Heartbeat") }.suffix(60).joined(separator: "\n"))
            """
        )
        let delegated = groupLog.count { $0.contains("delegating") }
        try await b.close()
        // The group gives B's partitions to A (eager: takes A's own first), which does not poll: A's librdkafka hands
        // the rebalance to the application's queue and waits for its call.
        #expect(
            await eventually { groupLog.count { $0.contains("delegating") } > delegated },
            "the group's rebalance waits for A"
        )
        // The close waits a session timeout at most for rebalances before leaving; the rest is for a loaded machine.
        let closed = await finishes(within: configuration.sessionTimeout * 10) {
            do {
                try await a.close()
            } catch {
                Issue.record("A's close failed: \(error)")
            }
        }
        #expect(closed, "A's close returned")
    }
}
