import AppStoreTestSupport
import Foundation
import KafkaClient
import NotificationStore
import PostgresRuntime
import Prometheus
import StoreTestSupport
import Testing

@testable import Worker

@Suite(
    "Group commit: partition batches ready together share a transaction; the writer commits no offset",
    .tags(.store)
)
struct GroupCommitWriterTests {
    typealias Pipeline = WorkerPipelineTests

    /// The scenario's lines by subscription, each subscription's in file order, the subscriptions in first-seen order.
    static func subscriptions() throws -> [[Pipeline.ScenarioLine]] {
        var order: [String] = []
        var lines: [String: [Pipeline.ScenarioLine]] = [:]
        for line in try Pipeline.scenarioLines() {
            if lines[line.key] == nil { order.append(line.key) }
            lines[line.key, default: []].append(line)
        }
        return order.map { lines[$0]! }
    }

    static func writer(
        _ store: NotificationStore,
        metrics: WorkerMetrics,
        interval: Duration = .zero,
        maximumMessages: Int = 1_000
    ) -> GroupCommitWriter {
        GroupCommitWriter(
            store: store,
            lanes: 1,
            maximumMessages: maximumMessages,
            interval: interval,
            metrics: metrics,
            logger: Pipeline.logger()
        )
    }

    /// Runs `body` with a store on a fresh, migrated database.
    static func withStore(
        _ body: (NotificationStore, TestPostgresServer, String) async throws -> Void
    ) async throws {
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        try await NotificationStore.withRunning(configuration: database, logger: Pipeline.logger()) { store in
            _ = try await store.migrate()
            try await body(store, server, database.database)
        }
    }

    /// Hands `batches` to `writer` at once and starts its lanes once all of them wait, so that one transaction takes
    /// them all; returns each partition's outcome, and the lanes (cancel them when done).
    static func writeTogether(
        _ writer: GroupCommitWriter,
        _ batches: [(batch: NotificationBatch, offset: KafkaTopicPartitionOffset)]
    ) async -> (
        results: [KafkaTopicPartition: Result<GroupCommitWriter.Written, NotificationStoreError>],
        lanes: Task<Void, Never>
    ) {
        let shared = Task {
            await withTaskGroup(
                of: (KafkaTopicPartition, Result<GroupCommitWriter.Written, NotificationStoreError>).self
            ) { group in
                for (batch, offset) in batches {
                    group.addTask {
                        do throws(NotificationStoreError) {
                            return (
                                offset.topicPartition,
                                .success(try await writer.write(batch, of: offset.topicPartition, alone: false))
                            )
                        } catch {
                            return (offset.topicPartition, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
        }
        #expect(await eventually { writer.waitingBatches == batches.count })
        let lanes = Task { await writer.run() }
        return (await shared.value, lanes)
    }

    @Test(
        "Three partitions' batches waiting together: one transaction, and each caller gets the events of its own partition's rows"
    )
    func together() async throws {
        let subscriptions = try Self.subscriptions()
        try #require(subscriptions.count >= 3)
        try await Self.withStore { store, server, database in
            let metrics = WorkerMetrics()
            let writer = Self.writer(store, metrics: metrics)
            var batches: [(Int32, NotificationBatch)] = []
            for (partition, lines) in subscriptions.prefix(3).enumerated() {
                let batch = try await WorkerOutputTests.batch(
                    lines.map(\.body),
                    partition: Int32(partition),
                    firstOffset: 10
                )
                batches.append((Int32(partition), batch))
            }
            let results = Task { [batches] in
                try await withThrowingTaskGroup(of: (Int32, GroupCommitWriter.Written).self) { group in
                    for (partition, batch) in batches {
                        let of = KafkaTopicPartition(topic: Pipeline.topic, partition: partition)
                        group.addTask { (partition, try await writer.write(batch, of: of, alone: false)) }
                    }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
            }
            // The lanes start once all three wait, so the first transaction takes them all.
            #expect(await eventually { writer.waitingBatches == 3 })
            let lanes = Task { await writer.run() }
            let written = try await results.value

            #expect(try await server.psql(database, "SELECT count(DISTINCT xmin::text) FROM notifications") == "1")
            // Apple's retries in the scenario repeat notifications: each is stored once.
            let stored = Set(subscriptions.prefix(3).joined().map(\.uuid)).count
            #expect(try await server.psql(database, "SELECT count(*) FROM notifications") == "\(stored)")
            for (partition, _) in batches {
                let ids = try await server.psql(
                    database,
                    "SELECT string_agg(id::text, ',' ORDER BY id) FROM outbox WHERE source_partition = \(partition)"
                )
                let result = try #require(written[partition])
                let messages = try #require(result.outboxMessages, "events made in memory, none read back")
                #expect(messages.map { String($0.id) }.joined(separator: ",") == ids, "partition \(partition)")
            }
            let exposition = metrics.exposition
            #expect(exposition.contains("asnp_worker_transaction_batches_sum 3.0"))
            #expect(exposition.contains("asnp_worker_transaction_batches_count 1"))

            // Once stopped, a batch handed in fails at once, as the worker shutting down.
            lanes.cancel()
            await lanes.value
            let late = try await WorkerOutputTests.batch([subscriptions[3][0].body], partition: 3, firstOffset: 0)
            await #expect(throws: NotificationStoreError.self) {
                _ = try await writer.write(
                    late,
                    of: KafkaTopicPartition(topic: Pipeline.topic, partition: 3),
                    alone: false
                )
            }
        }
    }

    @Test(
        "A shared transaction holding a batch of a partition claimed by another member since stores nothing; the error names that partition alone, and the other batch, written again alone, is stored"
    )
    func fencedPartition() async throws {
        let subscriptions = try Self.subscriptions()
        try #require(subscriptions.count >= 2)
        try await Self.withStore { store, server, database in
            let p0 = KafkaTopicPartition(topic: Pipeline.topic, partition: 0)
            let p1 = KafkaTopicPartition(topic: Pipeline.topic, partition: 1)
            let mine = try await store.claim([p0: "me#1", p1: "me#2"])
            _ = try await store.claim([p0: "another#1"])
            var stale = try await WorkerOutputTests.batch(subscriptions[0].map(\.body), partition: 0, firstOffset: 0)
            stale.fences = [
                PartitionFence(partition: p0, epoch: mine[p0]!.epoch, nextOffset: Int64(stale.entries.count))
            ]
            var owned = try await WorkerOutputTests.batch(subscriptions[1].map(\.body), partition: 1, firstOffset: 0)
            owned.fences = [
                PartitionFence(partition: p1, epoch: mine[p1]!.epoch, nextOffset: Int64(owned.entries.count))
            ]
            let ownedOffset = KafkaTopicPartitionOffset(p1, offset: Int64(owned.entries.count))
            let writer = Self.writer(store, metrics: WorkerMetrics())
            let (results, lanes) = await Self.writeTogether(
                writer,
                [(stale, KafkaTopicPartitionOffset(p0, offset: Int64(stale.entries.count))), (owned, ownedOffset)]
            )
            defer { lanes.cancel() }
            for partition in [p0, p1] {
                let error = try #require(results[partition]).error
                #expect(error?.code == .partitionNotOwned, "\(partition)")
                #expect(error?.partitions == [p0], "\(partition)")
            }
            #expect(try await server.psql(database, "SELECT count(*) FROM notifications") == "0")

            _ = try await writer.write(owned, of: p1, alone: true)
            let stored = Set(subscriptions[1].map(\.uuid)).count
            #expect(try await server.psql(database, "SELECT count(*) FROM notifications") == "\(stored)")
        }
    }

    @Test(
        "A shared transaction gives up on a row lock held elsewhere (CONFLICT, 55P03) and writes nothing; written alone, the other partition's batch is stored while the lock still holds"
    )
    func lockedRow() async throws {
        let subscriptions = try Self.subscriptions()
        let locked = try #require(subscriptions.first { $0.count >= 2 })
        let other = try #require(subscriptions.first { $0[0].key != locked[0].key })
        try await Self.withStore { store, server, database in
            // The locked subscription's row exists: its first notification is stored.
            _ = try await store.write(try await WorkerOutputTests.batch([locked[0].body], partition: 0, firstOffset: 0))
            let lock = try #require(
                try await HeldRowLock.take(
                    originalTransactionId: locked[0].key,
                    server: server,
                    database: database
                ),
                "the row lock was taken"
            )

            let metrics = WorkerMetrics()
            let writer = Self.writer(store, metrics: metrics)
            let lockedBatch = try await WorkerOutputTests.batch(
                locked.dropFirst().map(\.body),
                partition: 0,
                firstOffset: 1
            )
            let otherBatch = try await WorkerOutputTests.batch(other.map(\.body), partition: 1, firstOffset: 0)
            let otherOffset = KafkaTopicPartitionOffset(
                topic: Pipeline.topic,
                partition: 1,
                offset: Int64(otherBatch.entries.count)
            )
            let lockedOffset = KafkaTopicPartitionOffset(topic: Pipeline.topic, partition: 0, offset: 99)
            let (outcomes, lanes) = await Self.writeTogether(
                writer,
                [(lockedBatch, lockedOffset), (otherBatch, otherOffset)]
            )
            defer { lanes.cancel() }
            let results = Array(outcomes.values)
            #expect(results.count == 2)
            for result in results {
                #expect(throws: NotificationStoreError.self) { try result.get() }
                if case .failure(let error) = result {
                    #expect(error.code == .conflict && error.sqlState == "55P03", "\(error)")
                }
            }
            #expect(!metrics.exposition.contains("asnp_worker_transaction_batches_count 1"), "no transaction committed")
            #expect(try await server.psql(database, "SELECT count(*) FROM notifications") == "1")

            // Retried alone (as the worker retries a failed batch), the other partition's batch does not wait.
            _ = try await writer.write(otherBatch, of: otherOffset.topicPartition, alone: true)
            #expect(
                try await server.psql(database, "SELECT count(*) FROM notifications WHERE kafka_partition = 1")
                    == "\(Set(other.map(\.uuid)).count)"
            )
            #expect(try await lock.isHeld(), "the lock still held")
            try await lock.release()
        }
    }

    /// How many transactions stored the notifications of `partitions`.
    static func transactions(
        of partitions: [Int32],
        _ server: TestPostgresServer,
        _ database: String
    ) async throws -> Int? {
        let list = partitions.map(String.init).joined(separator: ", ")
        return Int(
            try await server.psql(
                database,
                "SELECT count(DISTINCT xmin::text) FROM notifications WHERE kafka_partition IN (\(list))"
            )
        )
    }

    /// The batch of `lines` for `partition` from offset 0, and its partition.
    static func batch(
        _ lines: [Pipeline.ScenarioLine],
        partition: Int32
    ) async throws -> (NotificationBatch, KafkaTopicPartition) {
        let batch = try await WorkerOutputTests.batch(lines.map(\.body), partition: partition, firstOffset: 0)
        return (batch, KafkaTopicPartition(topic: Pipeline.topic, partition: partition))
    }

    @Test(
        "Batches handed in within the interval after a transaction started wait and share the next one; a whole transaction's messages go at once; stopping ends the wait"
    )
    func interval() async throws {
        let subscriptions = try Self.subscriptions()
        try #require(subscriptions.count >= 4)
        try await Self.withStore { store, server, database in
            let metrics = WorkerMetrics()
            let (first, firstPartition) = try await Self.batch(subscriptions[0], partition: 0)
            let (second, secondPartition) = try await Self.batch(subscriptions[1], partition: 1)
            let (third, thirdPartition) = try await Self.batch(subscriptions[2], partition: 2)
            // An interval no test run reaches: only a whole transaction (the second and third batches) or stopping
            // can end a wait.
            let writer = Self.writer(
                store,
                metrics: metrics,
                interval: .seconds(3_600),
                maximumMessages: second.entries.count + third.entries.count
            )
            let lanes = Task { await writer.run() }
            // Nothing was written before: the first batch goes at once.
            _ = try await writer.write(first, of: firstPartition, alone: false)

            let secondWritten = Task { try await writer.write(second, of: secondPartition, alone: false) }
            #expect(await eventually { writer.pausingLanes == 1 && writer.waitingBatches == 1 })
            #expect(
                try await server.psql(database, "SELECT count(*) FROM notifications WHERE kafka_partition = 1") == "0",
                "the second batch waits for the interval"
            )

            _ = try await writer.write(third, of: thirdPartition, alone: false)
            _ = try await secondWritten.value
            #expect(
                try await Self.transactions(of: [1, 2], server, database) == 1,
                "the second and third batches share a transaction"
            )
            #expect(try await server.psql(database, "SELECT count(DISTINCT xmin::text) FROM notifications") == "2")
            let exposition = metrics.exposition
            #expect(exposition.contains("asnp_worker_transaction_batches_sum 3.0"))
            #expect(exposition.contains("asnp_worker_transaction_batches_count 2"))

            // A lane waiting out its interval when the worker stops: the waiting batch fails, the lane ends.
            let (fourth, fourthPartition) = try await Self.batch(subscriptions[3], partition: 3)
            try #require(fourth.entries.count < second.entries.count + third.entries.count)
            let fourthWritten = Task { try await writer.write(fourth, of: fourthPartition, alone: false) }
            #expect(await eventually { writer.pausingLanes == 1 && writer.waitingBatches == 1 })
            lanes.cancel()
            #expect(await finishes(within: .seconds(60)) { await lanes.value })
            await #expect(throws: NotificationStoreError.self) { try await fourthWritten.value }
        }
    }

    @Test(
        "A batch of a partition that is behind does not wait out the interval: it starts the transaction, with the batches waiting"
    )
    func behind() async throws {
        let subscriptions = try Self.subscriptions()
        try #require(subscriptions.count >= 3)
        try await Self.withStore { store, server, database in
            let writer = Self.writer(store, metrics: WorkerMetrics(), interval: .seconds(3_600))
            let lanes = Task { await writer.run() }
            defer { lanes.cancel() }
            let (first, firstPartition) = try await Self.batch(subscriptions[0], partition: 0)
            let (second, secondPartition) = try await Self.batch(subscriptions[1], partition: 1)
            let (third, thirdPartition) = try await Self.batch(subscriptions[2], partition: 2)
            _ = try await writer.write(first, of: firstPartition, alone: false)
            let secondWritten = Task { try await writer.write(second, of: secondPartition, alone: false) }
            #expect(await eventually { writer.pausingLanes == 1 && writer.waitingBatches == 1 })

            _ = try await writer.write(third, of: thirdPartition, alone: false, isBehind: true)
            _ = try await secondWritten.value
            #expect(
                try await Self.transactions(of: [1, 2], server, database) == 1,
                "the second and third batches share a transaction"
            )
            #expect(try await server.psql(database, "SELECT count(DISTINCT xmin::text) FROM notifications") == "2")
        }
    }

    @Test("A batch handed in within the interval after a transaction started is written once the interval is over")
    func intervalOver() async throws {
        let subscriptions = try Self.subscriptions()
        try #require(subscriptions.count >= 2)
        try await Self.withStore { store, server, database in
            let interval = Duration.milliseconds(300)
            let writer = Self.writer(store, metrics: WorkerMetrics(), interval: interval)
            let lanes = Task { await writer.run() }
            defer { lanes.cancel() }
            let (first, firstPartition) = try await Self.batch(subscriptions[0], partition: 0)
            let (second, secondPartition) = try await Self.batch(subscriptions[1], partition: 1)
            let start = ContinuousClock.now
            _ = try await writer.write(first, of: firstPartition, alone: false)
            _ = try await writer.write(second, of: secondPartition, alone: false)
            // The first transaction started after `start`, the second no sooner than the interval after that.
            #expect(start.duration(to: .now) >= interval)
            #expect(try await server.psql(database, "SELECT count(DISTINCT xmin::text) FROM notifications") == "2")
        }
    }
}

extension WorkerMetrics {
    /// The registry as a scrape gives it.
    fileprivate var exposition: String {
        var scraped: [UInt8] = []
        registry.emit(into: &scraped)
        return String(decoding: scraped, as: UTF8.self)
    }
}

extension Result {
    /// The failure's error, nil for a success.
    fileprivate var error: Failure? {
        guard case .failure(let error) = self else { return nil }
        return error
    }
}
