import AppStoreTestSupport
import KafkaClient
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Synchronization
import Testing

@Suite(
    "Partition ownership: a claim waits for the previous owner's batch in flight; a batch of a stale claim stores nothing",
    .tags(.store)
)
struct PartitionOwnershipTests {
    static let partition = KafkaTopicPartition(topic: StoreFixtures.topic, partition: 0)

    /// `bodies` as a batch of partition 0 from `offset`, fenced with `epoch`.
    static func batch(_ bodies: [String], from offset: Int64, epoch: Int64) async -> NotificationBatch {
        var batch = NotificationBatch()
        for (index, body) in bodies.enumerated() {
            batch.entries.append(await StoreFixtures.entry(body: body, offset: offset + Int64(index)))
        }
        batch.fences = [PartitionFence(partition: partition, epoch: epoch, nextOffset: offset + Int64(bodies.count))]
        return batch
    }

    /// Distinct notifications of the scenario.
    static func bodies(_ count: Int) throws -> [String] {
        var seen = Set<String>()
        return Array(try StoreFixtures.scenario().filter { seen.insert($0.uuid).inserted }.prefix(count).map(\.body))
    }

    static func count(_ table: String, _ server: TestPostgresServer, _ database: String) async throws -> String {
        try await server.psql(database, "SELECT count(*) FROM \(table)")
    }

    @Test(
        """
        A batch fenced with an epoch older than the partition's latest claim is refused and stores nothing; the \
        owner's is stored and records the offset it stored through; a claim made again by the same owner keeps its epoch
        """
    )
    func staleEpochRefused() async throws {
        let (server, configuration) = try await makeDatabase()
        let database = configuration.database
        let bodies = try Self.bodies(4)
        try await withStore(configuration) { store in
            let first = try await store.claim([Self.partition: "a#1"])
            #expect(first == [Self.partition: PartitionClaim(epoch: 1, storedThroughOffset: 0)], "an empty database")
            #expect(try await store.claim([Self.partition: "a#1"]) == first, "the same claim made again")
            #expect(try await store.claim([Self.partition: "b#1"])[Self.partition]?.epoch == 2)

            let stale = await Self.batch(Array(bodies.prefix(3)), from: 0, epoch: 1)
            let refused = await #expect(throws: NotificationStoreError.self) { try await store.write(stale) }
            #expect(refused?.code == .partitionNotOwned)
            #expect(refused?.partitions == [Self.partition])
            #expect(refused?.isRetriable == false)
            for table in ["notifications", "rejected_notifications", "outbox"] {
                #expect(try await Self.count(table, server, database) == "0", "\(table): nothing stored")
            }
            let offset = "SELECT coalesce(stored_through_offset::text, 'none') FROM partition_owners"
            #expect(try await server.psql(database, offset) == "0", "nothing stored, in a database holding nothing")

            let owned = try await store.write(await Self.batch(Array(bodies.prefix(3)), from: 0, epoch: 2))
            #expect(owned.storedNotifications.count == 3)
            #expect(try await server.psql(database, offset) == "3")
            // A batch again from an earlier offset (a redelivery) leaves the offset stored through where it was.
            _ = try await store.write(await Self.batch([bodies[3]], from: 1, epoch: 2))
            #expect(try await server.psql(database, offset) == "3")
        }
    }

    @Test(
        """
        A claim waits for the previous owner's batch transaction in flight; that batch commits, and as the claim \
        returns its rows and outbox are there to read; the previous owner's next batch is refused
        """
    )
    func claimWaitsForTheBatchInFlight() async throws {
        let (server, configuration) = try await makeDatabase()
        let database = configuration.database
        let bodies = try Self.bodies(3)
        try await withStore(configuration) { store in
            let epoch = try #require(try await store.claim([Self.partition: "a#1"])[Self.partition]?.epoch)
            // Two notifications and a rejected body whose row a session of the test holds: the batch's transaction
            // stays open after its fence and its notifications.
            let batch = await Self.batch([bodies[0], bodies[1], "not a notification"], from: 0, epoch: epoch)
            let held = try #require(
                try await HeldRowLock.take(
                    """
                    INSERT INTO rejected_notifications (status, reason, body, received_at, kafka_topic, kafka_partition,
                        kafka_offset)
                    VALUES ('HELD', 'held by the test', decode('00', 'hex'), now(), '\(Self.partition.topic)', 0, 2)
                    """,
                    server: server,
                    database: database
                )
            )
            let write = Task { try await store.write(batch) }
            #expect(try await eventually { try await HeldRowLock.waiting(server: server, database: database) == 1 })

            let returned = Mutex(false)
            let claim = Task {
                let epochs = try await store.claim([Self.partition: "b#1"])
                returned.withLock { $0 = true }
                // Right as the claim returns: what the previous owner stored is there to read.
                let notifications = try await Self.count("notifications", server, database)
                let outbox = try await store.pendingOutbox(source: Self.partition, limit: 100)
                return (epochs[Self.partition]?.epoch, notifications, outbox.map(\.id))
            }
            let claimWaits = try await eventually {
                try await HeldRowLock.waiting(server: server, database: database) == 2
            }
            #expect(claimWaits, "the claim waits for the batch's transaction")
            #expect(!returned.withLock { $0 })
            try await held.release()
            let written = try await write.value
            #expect(written.storedNotifications.count == 2)
            let (claimed, notifications, outbox) = try await claim.value
            #expect(claimed == epoch + 1)
            #expect(notifications == "2")
            #expect(outbox == written.outbox.map(\.id) && !outbox.isEmpty)

            let late = await Self.batch([bodies[2]], from: 3, epoch: epoch)
            let refused = await #expect(throws: NotificationStoreError.self) { try await store.write(late) }
            #expect(refused?.code == .partitionNotOwned)
            #expect(try await Self.count("notifications", server, database) == "2")
        }
    }

    @Test(
        """
        A claim says how far the database holds the partition: 0 in a database holding nothing, unknown (NULL) when it \
        holds notifications stored without a fence, the last batch's next offset otherwise; a batch whose fence \
        expects more than the database holds is refused as STORED_OFFSET_BEHIND and stores nothing
        """
    )
    func storedThroughOffsets() async throws {
        let (server, configuration) = try await makeDatabase()
        let database = configuration.database
        let bodies = try Self.bodies(5)
        let other = KafkaTopicPartition(topic: StoreFixtures.topic, partition: 1)
        try await withStore(configuration) { store in
            // Stored without a fence, as a worker before migration 11 did.
            _ = try await store.write(await Self.batch([bodies[0]], from: 0, epoch: 0).withoutFences())
            let upgraded = try await store.claim([Self.partition: "a#1"])[Self.partition]
            #expect(upgraded == PartitionClaim(epoch: 1, storedThroughOffset: nil), "unknown after an upgrade")

            var first = await Self.batch(Array(bodies[1...2]), from: 1, epoch: 1)
            first.fences[0].storedThroughOffset = 1  // the group's committed offset: the database cannot say
            let refused = await #expect(throws: NotificationStoreError.self) { try await store.write(first) }
            #expect(refused?.code == .storedOffsetBehind, "NULL holds nothing the writer expects")
            first.fences[0].storedThroughOffset = nil
            _ = try await store.write(first)
            #expect(try await store.claim([Self.partition: "a#1"])[Self.partition]?.storedThroughOffset == 3)

            // The database restored to before that batch: the owner's next batch expects 3.
            try await server.psql(database, "UPDATE partition_owners SET stored_through_offset = 1")
            var next = await Self.batch(Array(bodies[3...4]), from: 3, epoch: 1)
            next.fences[0].storedThroughOffset = 3
            let behind = await #expect(throws: NotificationStoreError.self) { try await store.write(next) }
            #expect(behind?.code == .storedOffsetBehind)
            #expect(behind?.partitions == [Self.partition])
            #expect(behind?.isRetriable == false)
            #expect(try await Self.count("notifications", server, database) == "3", "nothing of it stored")
            let offset = "SELECT stored_through_offset FROM partition_owners WHERE kafka_partition = 0"
            #expect(try await server.psql(database, offset) == "1")
            // The epoch went back too: claimed by another, which takes precedence.
            try await server.psql(database, "UPDATE partition_owners SET epoch = 0")
            let stale = await #expect(throws: NotificationStoreError.self) { try await store.write(next) }
            #expect(stale?.code == .partitionNotOwned)

            // Another partition claimed in this database, which holds notifications: unknown, not 0.
            #expect(try await store.claim([other: "a#2"])[other]?.storedThroughOffset == nil)
        }
    }
}

extension NotificationBatch {
    /// The same entries, with no fence: a write by a tool, or by a worker before migration 11.
    fileprivate func withoutFences() -> NotificationBatch {
        NotificationBatch(entries: entries)
    }
}
