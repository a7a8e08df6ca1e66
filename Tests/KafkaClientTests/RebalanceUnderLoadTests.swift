import AppStoreTestSupport
import KafkaClient
import NIOCore
import Testing

/// No message may go missing while partitions move between members that consume and commit at full speed. One way
/// it could (the reason the consumer does not use librdkafka 2.0.2's batch call): librdkafka pauses every assigned
/// partition itself during a rebalance, and the batch call drops messages it already counted as delivered, so a
/// kept partition resumes after them. That is a race this test can hit but not force; it checks the end-to-end
/// guarantee under real rebalances, whatever the cause of a loss would be.
@Suite("Rebalances while consuming at full speed", .tags(.pipeline))
struct RebalanceUnderLoadTests {
    @Test(
        "Members that commit as they go lose no message while partitions move between them mid-stream",
        arguments: [KafkaConsumerConfiguration.RebalanceProtocol.cooperativeSticky, .eagerRange]
    )
    func noLossAcrossRebalances(rebalanceProtocol: KafkaConsumerConfiguration.RebalanceProtocol) async throws {
        let topic = "stream"
        let cluster = try KafkaTestCluster(topics: [topic: 8])
        let configuration = cluster.consumerConfiguration(
            group: "streamers",
            topics: [topic],
            rebalanceProtocol: rebalanceProtocol
        )
        // A consumer joins its group as soon as it exists (librdkafka's own thread), so each is made when it joins.
        func member(_ name: String) throws -> GroupMember {
            GroupMember(name: name, consumer: try KafkaConsumer(configuration: configuration, logger: cluster.logger))
        }
        let a = try member("A")
        let total = 60_000
        let (bJoined, cJoined) = (Flag(), Flag())

        try await withThrowingTaskGroup(of: Void.self) { group in
            // Commits after every batch: a message skipped by a member and committed past is lost for good.
            group.addTask { try await a.pollUntilCancelled() }
            #expect(await eventually { a.consumer.assignment.count == 8 })
            group.addTask {
                _ = try await cluster.withProducer { producer in
                    for chunk in stride(from: 0, to: total, by: 500) {
                        // The second third once B has partitions, the last once C has: the stream goes on while
                        // they move, however long the rebalances take on a loaded machine.
                        if chunk == total / 3 {
                            #expect(await eventually { bJoined.isSet }, "B got partitions")
                        } else if chunk == total / 3 * 2 {
                            #expect(await eventually { cJoined.isSet }, "C got partitions")
                        }
                        _ = await producer.send(
                            contentsOf: (chunk..<chunk + 500).map {
                                KafkaProducerMessage(
                                    topic: topic,
                                    key: "k\($0 % 64)",
                                    value: ByteBuffer(string: "\($0)")
                                )
                            }
                        )
                    }
                }
            }
            // Partitions move mid-stream: B joins, C joins, C leaves. C joins once B has partitions, so that each
            // move is a rebalance of its own (the mock gathers members that join while it rebalances into one).
            let b = try member("B")
            group.addTask { try await b.pollUntilCancelled() }
            if await eventually({ !b.consumer.assignment.isEmpty }) { bJoined.set() }
            let c = try member("C")
            group.addTask {
                while c.deliveries.count < 2_000, !Task.isCancelled {
                    try await c.pollOnce()
                    if !c.consumer.assignment.isEmpty { cJoined.set() }
                }
                try await c.consumer.close()
            }
            let members = [a, b, c]
            // However long a loaded machine takes: gives up only once no member received anything for a
            // max.poll.interval (a member that stops polling that long loses its partitions), so a lost message
            // fails the test and a slow run does not.
            var received = 0
            var lastGrowth = ContinuousClock.now
            var everything = false
            while !everything, ContinuousClock.now - lastGrowth < configuration.maxPollInterval {
                try? await Task.sleep(for: .milliseconds(200))
                let count = members.map(\.deliveries.count).reduce(0, +)
                if count > received { (received, lastGrowth) = (count, .now) }
                if count >= total { everything = Set(members.flatMap(\.deliveries).map { Pair($0) }).count >= total }
            }
            group.cancelAll()
            try? await group.waitForAll()
            let delivered = Set(members.flatMap(\.deliveries).map { Pair($0) })
            #expect(everything && delivered.count == total, "\(total - delivered.count) messages never delivered")
            #expect(!c.events.assigned.isEmpty, "C took part")
            try await b.consumer.close()
        }
        try await a.consumer.close()
    }
}
