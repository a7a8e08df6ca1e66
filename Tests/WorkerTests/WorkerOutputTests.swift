import AppStoreTestSupport
import Foundation
import KafkaClient
import NIOCore
import NotificationStore
import PipelineContract
import PostgresRuntime
import Prometheus
import StoreTestSupport
import Testing

@testable import Worker

@Suite(
    "Workers' output topics: never stalled by the output brokers, never silent on late rows, never ending stale",
    .tags(.pipeline)
)
struct WorkerOutputTests {
    typealias Pipeline = WorkerPipelineTests
    static let topics = OutputTopics()

    /// `bodies` verified as if consumed from the raw topic's `partition` from `firstOffset` on.
    static func batch(_ bodies: [String], partition: Int32, firstOffset: Int64) async throws -> NotificationBatch {
        let verifier = RawBatchVerifier(directory: try Pipeline.directory(), parallelism: 2)
        let messages = bodies.enumerated().map { index, body in
            let raw = Pipeline.rawMessage(body)
            return KafkaMessage(
                topic: raw.topic,
                partition: partition,
                offset: firstOffset + Int64(index),
                key: raw.key,
                value: raw.value,
                headers: raw.headers,
                timestamp: nil
            )
        }
        return try await verifier.batch(for: messages)
    }

    /// A publisher to the output topics on the rig's store and producer.
    static func publisher(_ rig: WorkerTestRig) -> OutboxPublisher {
        OutboxPublisher(
            store: rig.store,
            producer: rig.producer,
            topics: topics,
            metrics: WorkerMetrics(),
            logger: rig.logger
        )
    }

    /// The `ce_id`s on the decoded topic.
    static func decodedIDs(_ messages: [KafkaMessage]) -> Set<String> {
        Set(messages.filter { $0.topic == topics.decoded }.compactMap { $0.headers.first(named: "ce_id") })
    }

    /// Per subscription, the `last_notification_uuid` of the last event on the state topic.
    static func lastStates(_ messages: [KafkaMessage]) throws -> [String: String] {
        var states: [String: String] = [:]
        for message in messages where message.topic == topics.subscriptionState {
            let key = String(buffer: try #require(message.key))
            let value = try JSONSerialization.jsonObject(with: Data(String(buffer: message.value).utf8))
            states[key] = (value as? [String: Any])?["last_notification_uuid"] as? String
        }
        return states
    }

    /// Per subscription, its row's `last_notification_uuid`.
    static func storedStates(_ rig: WorkerTestRig) async throws -> [String: String] {
        let text = try await rig.server.psql(
            rig.database.database,
            "SELECT string_agg(original_transaction_id || '=' || last_notification_uuid, ',') FROM subscriptions"
        )
        return Dictionary(
            uniqueKeysWithValues: text.split(separator: ",").map { pair in
                let parts = pair.split(separator: "=")
                return (String(parts[0]), String(parts[1]))
            }
        )
    }

    static func outbox(_ rig: WorkerTestRig) async throws -> String {
        try await rig.server.psql(
            rig.database.database,
            "SELECT count(*) FILTER (WHERE refused_at IS NULL) || '/' || count(refused_at) FROM outbox"
        )
    }

    @Test(
        "Two partitions' written rows in one publication: one send, one delete; every event out once, each partition complete through its last row, the outbox empty"
    )
    func writtenTogether() async throws {
        let subscriptions = try GroupCommitWriterTests.subscriptions()
        try await WorkerTestRig.run(partitions: 2, outputPartitions: 1) { rig, _ in
            let publisher = Self.publisher(rig)
            var publications: [(partition: KafkaTopicPartition, rows: [OutboxMessage])] = []
            for partition in [Int32(0), 1] {
                let lines = subscriptions[Int(partition)]
                let written = try await rig.store.write(
                    try await Self.batch(lines.map(\.body), partition: partition, firstOffset: 0)
                )
                let rows = try #require(written.outboxMessages)
                publications.append((KafkaTopicPartition(topic: Pipeline.topic, partition: partition), rows))
            }
            let outcomes = await publisher.publishWritten(publications)
            #expect(outcomes.map(\.0) == publications.map(\.partition))
            #expect(outcomes.map(\.1) == publications.map { .complete(throughID: $0.rows.last?.id) })
            #expect(try await rig.server.psql(rig.database.database, "SELECT count(*) FROM outbox") == "0")
            let uuids = Set(subscriptions.prefix(2).joined().map { $0.uuid.lowercased() })
            let published = try await Pipeline.readAll([Self.topics.decoded], mock: rig.mock, logger: rig.logger) {
                Self.decodedIDs($0).count >= uuids.count
            }
            #expect(Self.decodedIDs(published) == uuids)
            #expect(published.count == uuids.count, "each decoded event once")
        }
    }

    @Test("Rows a previous owner commits after the partition moved are published by the new owner, unprompted")
    func lateRowsOfAPreviousOwner() async throws {
        let lines = try Pipeline.scenarioLines()
        try await WorkerTestRig.run(
            partitions: 2,
            outputPartitions: 1,
            configureWorker: { $0.outboxSweepInterval = .seconds(1) }
        ) { rig, startWorker in
            _ = try startWorker()
            // The member consumes and publishes: one body stored, its events out.
            _ = try await rig.producer.send(Pipeline.rawMessage(lines[0].body))
            try await rig.expectRows(notifications: 1, rejected: 0)
            #expect(try await eventually { try await Self.outbox(rig) == "0/0" })

            // A member that had partition 0 before finishes a batch of it now: its transaction commits rows that no
            // batch, failure or rebalance of this member will mention.
            let late = Array(lines.dropFirst().filter { $0.uuid != lines[0].uuid }.prefix(3))
            let result = try await rig.store.write(
                try await Self.batch(late.map(\.body), partition: 0, firstOffset: 1_000)
            )
            #expect(!result.outbox.isEmpty)
            let drained = try await eventually { try await Self.outbox(rig) == "0/0" }
            #expect(drained, "the late rows are published and deleted")
            let expected = Set(late.map { $0.uuid.lowercased() })
            let published = try await Pipeline.readAll([Self.topics.decoded], mock: rig.outputMock, logger: rig.logger)
            {
                Self.decodedIDs($0).isSuperset(of: expected)
            }
            #expect(Self.decodedIDs(published).isSuperset(of: expected))
            try await rig.expectOutputsReconciled("after a previous owner's late batch")
        }
    }

    @Test(
        """
        A stored notification whose body is gone before its decoded event went out: the new owner sets the row aside \
        with why and publishes the rest (it was deleted unpublished, without a word)
        """
    )
    func rowWhoseBodyIsGoneSetAside() async throws {
        let lines = try Pipeline.scenarioLines()
        try await WorkerTestRig.run(partitions: 1, outputPartitions: 1) { rig, startWorker in
            _ = try await rig.store.write(try await Self.batch([lines[0].body], partition: 0, firstOffset: 0))
            // As when a month of bodies went before its events were published (by hand, or a restore without it).
            try await rig.server.psql(rig.database.database, "DELETE FROM notification_bodies")
            _ = try startWorker()
            let setAside = try await eventually { try await Self.outbox(rig) == "0/1" }
            let outbox = try await Self.outbox(rig)
            #expect(setAside, "the state row published, the decoded row set aside: \(outbox)")
            #expect(
                try await rig.server.psql(rig.database.database, "SELECT stream || ': ' || refusal FROM outbox")
                    == "decoded: the notification's body and decoded JSON are gone (its month of bodies dropped)"
            )
        }
    }

    @Test(
        """
        Output brokers refusing every produce request for a while: bodies are stored and committed meanwhile, the \
        member stays, and afterwards every event is published and the state topic ends as the table
        """
    )
    func outputOutage() async throws {
        let lines = try Pipeline.scenarioLines()
        let unique = Set(lines.map(\.uuid)).count
        // A publication waits for the output brokers up to this delivery timeout; storing must not wait for it.
        let deliveryTimeout = Duration.seconds(120)
        try await WorkerTestRig.run(
            partitions: 4,
            outputPartitions: 2,
            separateOutputCluster: true,
            outputDeliveryTimeout: deliveryTimeout
        ) { rig, startWorker in
            rig.outputMock.injectErrors(
                Array(repeating: .notEnoughReplicas, count: 100_000),
                into: .produce
            )
            let worker = try startWorker()
            let reports = await rig.producer.send(contentsOf: lines.map { Pipeline.rawMessage($0.body) })
            #expect(reports.allSatisfy { (try? $0.get()) != nil })

            // Well within the delivery timeout: nothing has been published, everything is stored and committed.
            try await rig.expectRows(notifications: unique, rejected: 0)
            let admin = try KafkaAdminClient(cluster: rig.mock.clusterConfiguration, logger: rig.logger)
            let committed = try await eventually {
                try await admin.consumerLag(group: Pipeline.group, topic: Pipeline.topic).map(\.lag).reduce(0, +) == 0
            }
            #expect(committed, "offsets are committed while the events wait")
            #expect(worker.liveness() == nil)
            let waiting = try await Self.outbox(rig)
            #expect(waiting != "0/0" && waiting.hasSuffix("/0"), "the events wait in the outbox: \(waiting)")

            rig.outputMock.clearInjectedErrors(for: .produce)
            let drained = try await eventually(timeout: deliveryTimeout) { try await Self.outbox(rig) == "0/0" }
            #expect(drained)
            let stored = try await Self.storedStates(rig)
            let published = try await Pipeline.readAll(
                [Self.topics.decoded, Self.topics.subscriptionState],
                mock: rig.outputMock,
                logger: rig.logger
            ) { Self.decodedIDs($0).count >= unique && ((try? Self.lastStates($0)) ?? [:]) == stored }
            #expect(Self.decodedIDs(published) == Set(lines.map { $0.uuid.lowercased() }))
            #expect(try Self.lastStates(published) == stored)
            try await rig.expectOutputsReconciled("after the output brokers' outage")
        }
    }

    @Test(
        """
        An event the producer refuses for good (over message.max.bytes): set aside with the reason and counted, the \
        events after it go out; its mark cleared by an operator, it is tried again
        """
    )
    func refusedEventsSetAside() async throws {
        let lines = Array(try Pipeline.scenarioLines().prefix(12))
        let hostile = Array(Fixtures.v2Cases.filter { $0.expectedStatus != "OK" }.prefix(3))
        // Rejected, so a dead letter carrying the whole body: larger than the output producer takes.
        let oversized = #"{"signedPayload": ""# + String(repeating: "x", count: 30_000) + #""}"#
        let unique = Set(lines.map(\.uuid)).count
        try await WorkerTestRig.run(
            partitions: 1,
            outputPartitions: 1,
            outputProperties: ["message.max.bytes": "20000"],
            configureWorker: { $0.outboxSweepInterval = .seconds(1) }
        ) { rig, startWorker in
            let worker = try startWorker()
            // The oversized dead letter first, in the same partition as everything after it.
            _ = await rig.producer.send(
                contentsOf: ([oversized] + hostile.map(\.body) + lines.map(\.body)).map { Pipeline.rawMessage($0) }
            )
            let rejected = hostile.count + 1
            try await rig.expectRows(notifications: unique, rejected: rejected)
            _ = try await eventually { try await Self.outbox(rig) == "0/1" }
            #expect(try await Self.outbox(rig) == "0/1", "the oversized dead letter set aside, nothing else left")
            let refusals = try await rig.server.psql(
                rig.database.database,
                "SELECT string_agg(stream || ': ' || refusal, ', ') FROM outbox WHERE refused_at IS NOT NULL"
            )
            #expect(refusals.hasPrefix("dead_letter: REFUSED"), "\(refusals)")
            #expect(refusals.contains("MSG_SIZE_TOO_LARGE"), "\(refusals)")
            let published = try await Pipeline.readAll(
                [Self.topics.decoded, Self.topics.deadLetter],
                mock: rig.mock,
                logger: rig.logger
            ) { Self.decodedIDs($0).count >= unique && $0.filter { $0.topic == Self.topics.deadLetter }.count >= 3 }
            #expect(Self.decodedIDs(published) == Set(lines.map { $0.uuid.lowercased() }))
            #expect(published.filter { $0.topic == Self.topics.deadLetter }.count == hostile.count)
            func refusedCount() -> String? {
                var scraped: [UInt8] = []
                worker.metrics.registry.emit(into: &scraped)
                return String(decoding: scraped, as: UTF8.self).split(separator: "\n").first {
                    $0.hasPrefix(#"asnp_worker_refused_events_total{stream="dead_letter",error="MSG_SIZE_TOO_LARGE"}"#)
                }?.split(separator: " ").last.map(String.init)
            }
            #expect(refusedCount() == "1")

            // An operator clears the mark (Docs/runbook.md): the next sweep tries the row again.
            _ = try await rig.server.psql(
                rig.database.database,
                "UPDATE outbox SET refused_at = NULL, refusal = NULL WHERE refused_at IS NOT NULL"
            )
            #expect(await eventually { refusedCount() == "2" }, "tried again, and refused again")
            _ = try await eventually { try await Self.outbox(rig) == "0/1" }
            #expect(try await Self.outbox(rig) == "0/1", "set aside again")
        }
    }

    @Test(
        "One subscription's state events published in the reverse order of their commits: the state topic ends on the row"
    )
    func stateTopicConverges() async throws {
        // Notifications of one subscription in signedDate order, committed in that order.
        let lines = try Pipeline.scenarioLines()
        let byKey = Dictionary(grouping: lines, by: \.key).filter { Set($0.value.map(\.uuid)).count >= 3 }
        let key = try #require(byKey.keys.sorted().first)
        var seen: Set<String> = []
        let events = byKey[key]!.sorted { $0.seq < $1.seq }.filter { seen.insert($0.uuid).inserted }
        try await WorkerTestRig.run(partitions: 2, outputPartitions: 1) { rig, _ in
            let publisher = Self.publisher(rig)
            let raw0 = KafkaTopicPartition(topic: Pipeline.topic, partition: 0)
            let raw1 = KafkaTopicPartition(topic: Pipeline.topic, partition: 1)
            // Partition 0 commits the first state, partition 1 the second: partitions were added, say.
            let first = try await rig.store.write(try await Self.batch([events[0].body], partition: 0, firstOffset: 0))
            _ = try await rig.store.write(try await Self.batch([events[1].body], partition: 1, firstOffset: 0))
            // Partition 1's member publishes first, then partition 0's, from the table.
            #expect(await publisher.publishPending(for: raw1) != .incomplete)
            #expect(await publisher.publishPending(for: raw0) != .incomplete)
            var stored = try await Self.storedStates(rig)
            var published = try await Pipeline.readAll(
                [Self.topics.subscriptionState],
                mock: rig.mock,
                logger: rig.logger
            ) { $0.count >= 2 }
            #expect(try Self.lastStates(published)[key] == stored[key])

            // The same with the rows as a write returned them: a third state commits and is published before the
            // first partition's member publishes its rows from memory.
            _ = try await rig.store.write(try await Self.batch([events[2].body], partition: 1, firstOffset: 1))
            let stale = try #require(first.outboxMessages)
            #expect(await publisher.publishPending(for: raw1) != .incomplete)
            #expect(await publisher.publishWritten([(raw0, stale)]).map(\.1) == [.complete(throughID: stale.last?.id)])
            stored = try await Self.storedStates(rig)
            published = try await Pipeline.readAll([Self.topics.subscriptionState], mock: rig.mock, logger: rig.logger)
            {
                $0.count >= 5
            }
            #expect(try Self.lastStates(published)[key] == stored[key])
            #expect(stored[key] == events[2].uuid.lowercased())
        }
    }
}
