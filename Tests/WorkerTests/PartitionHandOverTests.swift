import AppStoreTestSupport
import KafkaClient
import NotificationStore
import PipelineContract
import PostgresRuntime
import Prometheus
import StoreTestSupport
import Testing

@testable import Worker

@Suite(
    "A partition's hand-over between members: a previous owner's late batch keeps the decoded events in order",
    .tags(.pipeline)
)
struct PartitionHandOverTests {
    typealias Pipeline = WorkerPipelineTests
    typealias Output = WorkerOutputTests

    @Test(
        """
        A previous owner's batch still in its transaction when a member takes the partition over: its decoded event \
        is published before the new member's later event of the same subscription
        """
    )
    func lateBatchOfAPreviousOwner() async throws {
        let subscription = try #require(
            GroupCommitWriterTests.subscriptions().first { Set($0.map(\.uuid)).count >= 2 }
        )
        let earlier = subscription[0]
        let later = try #require(subscription.first { $0.uuid != earlier.uuid })
        let partition = KafkaTopicPartition(topic: Pipeline.topic, partition: 0)
        try await WorkerTestRig.run(
            partitions: 1,
            outputPartitions: 1,
            configureWorker: { $0.outboxSweepInterval = .seconds(1) }
        ) { rig, startWorker in
            let database = rig.database.database
            // The previous owner's batch: the earlier notification, and a rejected body whose row a session of the
            // test holds, so that its transaction stays open after storing the notification.
            var late = try await Output.batch([earlier.body, "not a notification"], partition: 0, firstOffset: 5_000)
            let epoch = try await rig.store.claim([partition: "previous owner"])[partition]!.epoch  // FENCE
            late.fences = [PartitionFence(partition: partition, epoch: epoch, nextOffset: 5_002)]  // FENCE
            let held = try #require(
                try await HeldRowLock.take(
                    """
                    INSERT INTO rejected_notifications (status, reason, body, received_at, kafka_topic, kafka_partition,
                        kafka_offset)
                    VALUES ('HELD', 'held by the test', decode('00', 'hex'), now(), '\(Pipeline.topic)', 0, 5001)
                    """,
                    server: rig.server,
                    database: database
                )
            )
            let previousOwner = Task { [late] in try await rig.store.write(late) }
            #expect(try await eventually { try await HeldRowLock.waiting(server: rig.server, database: database) == 1 })

            // The new member takes the partition over and consumes the later notification.
            _ = try startWorker()
            _ = try await rig.producer.send(Pipeline.rawMessage(later.body))
            let newOwnerWaits = try await eventually {
                try await HeldRowLock.waiting(server: rig.server, database: database) == 2
            }
            #expect(newOwnerWaits, "the new member waits for the previous owner's transaction")
            try await held.release()
            let written = try await previousOwner.value
            #expect(written.storedNotifications.count == 1, "the previous owner's batch committed")

            let ids = [earlier.uuid.lowercased(), later.uuid.lowercased()]
            let published = try await Pipeline.readAll(
                [Output.topics.decoded],
                mock: rig.outputMock,
                logger: rig.logger
            ) {
                Output.decodedIDs($0).isSuperset(of: ids)
            }
            let order = published.compactMap { $0.headers.first(named: "ce_id") }
            let positions = try ids.map { id in try #require(order.firstIndex(of: id), "\(id) published: \(order)") }
            #expect(positions[0] < positions[1], "decoded events of one subscription out of order: \(order)")
            try await rig.expectOutputsReconciled("after the hand-over")
        }
    }

    @Test(
        """
        A partition claimed by someone else while the group still gives it to the member (no revocation comes): the \
        member's batch is refused and counted, it claims the partition back after a backoff, and then stores it
        """
    )
    func claimedAwayWithoutRevocation() async throws {
        var seen = Set<String>()
        let lines = try Pipeline.scenarioLines().filter { seen.insert($0.uuid).inserted }
        let partition = KafkaTopicPartition(topic: Pipeline.topic, partition: 0)
        try await WorkerTestRig.run(partitions: 1, outputPartitions: 1) { rig, startWorker in
            let database = rig.database.database
            let worker = try startWorker()
            _ = try await rig.producer.send(Pipeline.rawMessage(lines[0].body))
            try await rig.expectRows(notifications: 1, rejected: 0)

            let taken = try #require(try await rig.store.claim([partition: "another member"])[partition]?.epoch)
            _ = try await rig.producer.send(Pipeline.rawMessage(lines[1].body))
            let fenced = await eventually {
                var scraped: [UInt8] = []
                worker.metrics.registry.emit(into: &scraped)
                return String(decoding: scraped, as: UTF8.self).split(separator: "\n").contains {
                    $0.hasPrefix("asnp_worker_fenced_batches_total ") && !$0.hasSuffix(" 0")
                }
            }
            #expect(fenced, "the batch after the other claim is refused, which the metrics count")
            try await rig.expectRows(notifications: 2, rejected: 0, "stored once the member claimed it back")
            let owner = try await rig.server.psql(database, "SELECT epoch || ' ' || owner FROM partition_owners")
            #expect(owner.hasPrefix("\(taken + 1) ") && !owner.hasSuffix(" another member"), "\(owner)")
            try await rig.expectOutputsReconciled("after the partition was claimed back")
        }
    }
}
