import AppStoreTestSupport
import Foundation
import KafkaClient
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

/// The monthly partitions of `notification_bodies` at the edges of time: a server in a time zone with daylight-saving
/// time, months made ahead and outside batch transactions, a month missing, a month misbounded by an earlier version.
@Suite("Body partitions: UTC months in any server time zone, made ahead, outside batches", .tags(.store))
struct BodyPartitionTests {
    /// An instant in RFC 3339.
    static func date(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text))
    }

    static func validBodies(_ count: Int, skipping: Int = 0) -> [String] {
        Fixtures.v2Cases.filter { $0.kind == "valid" }.dropFirst(skipping).prefix(count).map(\.body)
    }

    /// The partition each stored body is in, by Kafka offset: `offset=partition` lines.
    static func partitionsByOffset(_ server: TestPostgresServer, _ database: String) async throws -> String {
        try await server.psql(
            database,
            """
            SELECT string_agg(n.kafka_offset || '=' || b.tableoid::regclass, ',' ORDER BY n.kafka_offset)
            FROM notifications n JOIN notification_bodies b USING (notification_uuid, received_at)
            """
        )
    }

    @Test(
        """
        on a server in America/New_York, the schema migrates (it failed with 25P02: November's partition ran into \
        December), every month made is a UTC month, and bodies received in the last and first half hour of months \
        around daylight-saving changes are stored in their UTC months
        """
    )
    func utcMonthsInADaylightSavingZone() async throws {
        let (server, configuration) = try await makeDatabase()
        #expect(try await server.psql(configuration.database, "SHOW timezone") == TestPostgresServer.timeZone)
        let instants = [
            "2026-03-31T23:30:00Z", "2026-04-01T00:30:00Z", "2026-10-31T23:30:00Z", "2026-11-01T00:30:00Z",
            "2026-11-30T23:30:00Z", "2026-12-01T00:30:00Z",
        ]
        var entries: [NotificationBatch.Entry] = []
        for (offset, (body, instant)) in zip(Self.validBodies(instants.count), instants).enumerated() {
            entries.append(
                await StoreFixtures.entry(body: body, offset: Int64(offset), receivedAt: try Self.date(instant))
            )
        }
        let batch = entries
        try await withStore(configuration) { store in
            let written = try await store.write(NotificationBatch(entries: batch))
            #expect(written.storedNotifications.count == instants.count)
            #expect(written.storedRejections == 0 && written.unstorableNotifications == 0)
            for partition in try await store.bodyPartitions() {
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = TimeZone(identifier: "UTC")!
                let month = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: partition.start)
                #expect(
                    month.day == 1 && month.hour == 0 && month.minute == 0,
                    "\(partition.name) starts \(partition.start)"
                )
                #expect(partition.end == calendar.date(byAdding: .month, value: 1, to: partition.start))
            }
        }
        #expect(
            try await Self.partitionsByOffset(server, configuration.database)
                == """
                0=notification_bodies_2026_03,1=notification_bodies_2026_04,2=notification_bodies_2026_10,\
                3=notification_bodies_2026_11,4=notification_bodies_2026_11,5=notification_bodies_2026_12
                """
        )
        // The function itself, called from a session in the server's zone (as psql's is), bounds UTC months.
        _ = try await server.psql(
            configuration.database,
            "SELECT asnp_notification_bodies_partition('2027-03-31 22:00:00-04')"
        )
        let march = try await withStore(configuration, migrate: false) { store in
            try await store.bodyPartitions().first { $0.name == "notification_bodies_2027_04" }
        }
        #expect(march?.start == (try Self.date("2027-04-01T00:00:00Z")))
        #expect(march?.end == (try Self.date("2027-05-01T00:00:00Z")))
    }

    @Test(
        """
        a month an earlier version bounded in a daylight-saving zone (March ending at 23:00Z on the 31st): a body \
        in the hour no partition holds fails as retriable and is never set aside as UNSTORABLE (it was); schema 10 \
        moves the month's rows into a month bounded right, byte for byte, and the body is then stored
        """
    )
    func misboundedMonthRepaired() async throws {
        let (server, configuration) = try await makeDatabase()
        let database = configuration.database
        let bodies = Self.validBodies(2)
        let early = await StoreFixtures.entry(
            body: bodies[0],
            offset: 0,
            receivedAt: try Self.date("2025-03-15T12:00:00Z")
        )
        let late = await StoreFixtures.entry(
            body: bodies[1],
            offset: 1,
            receivedAt: try Self.date("2025-03-31T23:30:00Z")
        )
        try await withStore(configuration) { store in
            _ = try await store.write(NotificationBatch(entries: [early]))
        }
        let stored = "SELECT encode(sha256(asnp_raw_body(body)), 'hex') FROM notification_bodies ORDER BY received_at"
        let before = try await server.psql(database, stored)
        // As version 6's function made March in a New York session: its end an hour short of April.
        try await server.psql(
            database,
            """
            ALTER TABLE notification_bodies DETACH PARTITION notification_bodies_2025_03;
            ALTER TABLE notification_bodies_2025_03 RENAME TO made_right;
            CREATE TABLE notification_bodies_2025_03 PARTITION OF notification_bodies
                FOR VALUES FROM ('2025-03-01 00:00:00Z') TO ('2025-03-31 23:00:00Z');
            INSERT INTO notification_bodies SELECT * FROM made_right;
            DROP TABLE made_right;
            """
        )
        let (failure, rejected) = try await withStore(configuration, migrate: false) { store in
            var failure: NotificationStoreError?
            do {
                _ = try await store.write(NotificationBatch(entries: [late]))
            } catch let error as NotificationStoreError {
                failure = error
            }
            return (failure, try await store.counts().rejected)
        }
        let failed = try #require(failure, "the body in the hour no partition holds was stored")
        let context = failed.context ?? ""
        #expect(context.contains("not bounded by its UTC month"), "\(failed.debugDescription)")
        #expect(rejected == 0)
        try await server.psql(database, "DELETE FROM asnp_schema_migrations WHERE version = 10")
        try await withStore(configuration) { store in
            let march = try #require(
                try await store.bodyPartitions().first { $0.name == "notification_bodies_2025_03" }
            )
            #expect(march.end == (try Self.date("2025-04-01T00:00:00Z")))
            #expect(try await server.psql(database, stored) == before)
            let written = try await store.write(NotificationBatch(entries: [late]))
            #expect(written.storedNotifications.count == 1)
            #expect(try await store.counts().rejected == 0)
        }
        #expect(
            try await Self.partitionsByOffset(server, database)
                == "0=notification_bodies_2025_03,1=notification_bodies_2025_03"
        )
    }

    @Test(
        """
        months are made ahead: a long reader of notifications_decoded holding its lock does not hold up a batch of \
        next month (the batch used to create the month after inside its transaction, waiting for the reader); \
        making months then fails as CONFLICT after its lock timeouts, makes them once the reader is gone, and a \
        body of a month no partition holds makes its month and is stored
        """
    )
    func monthsMadeAheadOutsideBatches() async throws {
        let (server, configuration) = try await makeDatabase()
        let database = configuration.database
        let bodies = Self.validBodies(2)
        try await withStore(configuration) { store in
            #expect(
                NotificationStore.monthsAhead(in: try await store.bodyPartitions()) == NotificationStore.bodyMonthsAhead
            )
            let reader = Task {
                try await server.psql(database, "SELECT count(*), pg_sleep(600) FROM notifications_decoded")
            }
            defer { reader.cancel() }
            let readerHoldsItsLock = try await eventually {
                try await server.psql(
                    database,
                    """
                    SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                    WHERE l.relation = 'notification_bodies'::regclass AND l.granted AND a.query LIKE '%pg_sleep(600)%'
                    """
                ) == "1"
            }
            try #require(readerHoldsItsLock, "the reader holds its lock on notification_bodies")
            let nextMonth = Date().addingTimeInterval(31 * 86_400)
            let entry = await StoreFixtures.entry(body: bodies[0], offset: 0, receivedAt: nextMonth)
            #expect(try await store.write(NotificationBatch(entries: [entry])).storedNotifications.count == 1)
            let error = await #expect(throws: NotificationStoreError.self) {
                try await store.makeBodyPartitions(monthsAhead: 6)
            }
            #expect(error?.code == .conflict)
            try await server.psql(
                database,
                "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()"
            )
            _ = try? await reader.value
            let made = try await store.makeBodyPartitions(monthsAhead: 6)
            #expect(!made.isEmpty)
            #expect(NotificationStore.monthsAhead(in: try await store.bodyPartitions()) >= 6)
            // A month long gone (a replayed body): made by the write, outside its transaction.
            let old = await StoreFixtures.entry(
                body: bodies[1],
                offset: 1,
                receivedAt: try Self.date("2019-07-04T12:00:00Z")
            )
            #expect(try await store.write(NotificationBatch(entries: [old])).storedNotifications.count == 1)
            #expect(try await store.bodyPartitions().contains { $0.name == "notification_bodies_2019_07" })
        }
    }

    @Test(
        """
        retention keeps a month past the setting while decoded events of its notifications wait in the outbox \
        (it dropped the month and the events were deleted unpublished), naming it and the events, and drops it once \
        they are published
        """
    )
    func retentionWaitsForTheOutbox() async throws {
        let (server, configuration) = try await makeDatabase()
        let database = configuration.database
        let entries = await Self.validBodies(2).enumerated().asyncMap { offset, body in
            await StoreFixtures.entry(body: body, offset: Int64(offset))
        }
        try await withStore(configuration) { store in
            _ = try await store.write(NotificationBatch(entries: entries))
            let january = "notification_bodies_2026_01"
            let dryRun = try await store.applyBodyRetention(keepMonths: 1, dryRun: true)
            #expect(dryRun.held.map(\.partition.name) == [january])
            let held = try await store.applyBodyRetention(keepMonths: 1)
            #expect(held.held.map(\.partition.name) == [january])
            #expect(held.held.first?.unpublishedEvents == 2)
            #expect(!held.dropped.map(\.name).contains(january))
            let pending = try await store.pendingOutbox(source: .init(topic: StoreFixtures.topic, partition: 0))
            #expect(
                pending.filter { if case .decoded(let event) = $0.payload { !event.json.isEmpty } else { false } }.count
                    == 2
            )

            try await server.psql(database, "DELETE FROM outbox WHERE stream = 'decoded'")
            let dropped = try await store.applyBodyRetention(keepMonths: 1)
            #expect(dropped.dropped.map(\.name).contains(january))
            #expect(dropped.held.isEmpty)
        }
    }

    @Test(
        """
        a decoded outbox row whose body is gone reads as unpublishable, with why (it read as missing, and the \
        publisher deleted it unpublished); a rejected body is kept whole, its forged header in no table of headers
        """
    )
    func unpublishableNotMissing() async throws {
        let (server, configuration) = try await makeDatabase()
        let database = configuration.database
        let good = await StoreFixtures.entry(body: Self.validBodies(1)[0], offset: 0)
        let header = String(repeating: "Q", count: 4_000)
        let forged = await StoreFixtures.entry(body: #"{"signedPayload":"\#(header).e30.c2ln"}"#, offset: 1)
        try await withStore(configuration) { store in
            let headersBefore = try await server.psql(database, "SELECT count(*) FROM jws_headers")
            let written = try await store.write(NotificationBatch(entries: [good, forged]))
            #expect(written.storedRejections == 1)
            #expect(try await server.psql(database, "SELECT count(*) FROM jws_headers") != "0")
            #expect(
                try await server.psql(database, "SELECT count(*) FROM jws_headers WHERE length(header) = 4000") == "0",
                "\(headersBefore)"
            )
            #expect(
                try await server.psql(database, "SELECT get_byte(body, 0) FROM rejected_notifications") == "0"
            )
            try await server.psql(database, "DELETE FROM notification_bodies")
            let pending = try await store.pendingOutbox(source: .init(topic: StoreFixtures.topic, partition: 0))
            let decoded = pending.filter { $0.stream == .decoded }
            #expect(decoded.count == 1)
            guard case .unpublishable(let reason) = decoded.first?.payload else {
                Issue.record("expected an unpublishable row, read \(String(describing: decoded.first?.payload))")
                return
            }
            #expect(reason.contains("body"))
            let letters = pending.filter { $0.stream == .deadLetter }
            guard case .deadLetter(let letter) = letters.first?.payload else {
                Issue.record("expected the dead letter, read \(String(describing: letters.first?.payload))")
                return
            }
            #expect(letter.body == forged.raw.body)
        }
    }
}

extension Sequence {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
