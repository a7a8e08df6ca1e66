import AppStoreTestSupport
import Foundation
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

/// Retention of raw bodies: whole months of `notification_bodies` dropped, the facts kept.
@Suite("Retention: months of bodies past the setting are dropped whole; facts and newer bodies stay", .tags(.store))
struct RetentionTests {
    @Test(
        """
        the scenario received in January, newer notifications this month: keeping one month drops January's bodies \
        (a dry run first names it and drops nothing), notifications and subscriptions stay as they were, this \
        month's bodies come back byte for byte; with the clock a year ahead another store drops everything, and this \
        store's next write makes its month again
        """
    )
    func dropsWholeMonths() async throws {
        let (server, configuration) = try await makeDatabase()
        let database = configuration.database
        let scenario = try await StoreFixtures.scenarioEntries()
        let recentFixtures = Fixtures.v2Cases.filter { $0.kind == "valid" }.prefix(3)
        var entries: [NotificationBatch.Entry] = []
        for (index, fixture) in recentFixtures.enumerated() {
            entries.append(
                await StoreFixtures.entry(body: fixture.body, offset: Int64(1_000 + index), receivedAt: Date())
            )
        }
        let recent = entries
        let facts = """
            SELECT (SELECT count(*) || ':' || md5(string_agg(notification_uuid || notification_type || kafka_offset, ','
                ORDER BY notification_uuid)) FROM notifications)
            || ' ' || (SELECT count(*) || ':' || md5(string_agg(original_transaction_id || last_notification_uuid, ','
                ORDER BY original_transaction_id)) FROM subscriptions)
            """
        let recentBodies = """
            SELECT string_agg(encode(sha256(asnp_raw_body(body)), 'hex'), ',' ORDER BY notification_uuid)
            FROM notification_bodies WHERE received_at > now() - interval '1 day'
            """
        let january = "notification_bodies_2026_01"
        // January's write made its month only (months ahead are made from the current one).
        let past = [january]

        try await withStore(configuration) { store in
            _ = try await store.write(NotificationBatch(entries: scenario))
            _ = try await store.write(NotificationBatch(entries: recent))
            // Their decoded events published: retention keeps a month whose events wait.
            try await server.psql(database, "DELETE FROM outbox")
            let before = (try await server.psql(database, facts), try await server.psql(database, recentBodies))
            #expect(try await store.bodyPartitions().map(\.name).contains(january))

            let wouldDrop = try await store.applyBodyRetention(keepMonths: 1, dryRun: true)
            #expect(wouldDrop.dropped.map(\.name) == past)
            #expect(try await store.bodyPartitions().map(\.name).contains(january))

            let dropped = try await store.applyBodyRetention(keepMonths: 1)
            #expect(dropped.dropped.map(\.name) == past)
            let kept = try await store.bodyPartitions()
            #expect(!kept.map(\.name).contains(january))
            #expect(kept.allSatisfy { $0.end > NotificationStore.retentionCutoff(keepMonths: 1) })
            #expect(try await server.psql(database, facts) == before.0)
            #expect(try await server.psql(database, recentBodies) == before.1)
            #expect(before.1.split(separator: ",").count == recent.count)
            // January's notifications keep their facts, without their decoded JSON.
            #expect(
                try await server.psql(
                    database,
                    "SELECT count(*) FILTER (WHERE decoded IS NULL) || '/' || count(*) FROM notifications_decoded"
                ) == "\(Set(try StoreFixtures.scenario().map(\.uuid)).count)/\(try await store.counts().notifications)"
            )

            // Dropped by another store (another process): this one still takes this month's partition as made.
            let yearAhead = Date().addingTimeInterval(366 * 86_400)
            let all = try await withStore(configuration) { other in
                try await other.applyBodyRetention(keepMonths: 0, now: yearAhead)
            }
            #expect(Set(all.dropped.map(\.name)) == Set(kept.map(\.name)))
            #expect(try await store.bodyPartitions().isEmpty)
            #expect(try await server.psql(database, facts) == before.0)

            let later = await StoreFixtures.entry(
                body: try #require(Fixtures.v2Cases.filter { $0.kind == "valid" }.dropFirst(3).first).body,
                offset: 2_000,
                receivedAt: Date()
            )
            #expect(try await store.write(NotificationBatch(entries: [later])).storedNotifications.count == 1)
            #expect(try await store.bodyPartitions().count == 1, "this month, made again by the write")
        }
    }
}
