import AppStoreTestSupport
import Foundation
import KafkaClient
import NotificationSchema
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

@Suite("Migrations", .tags(.store))
struct MigrationTests {
    @Test("migrate creates the schema once; running it again applies nothing")
    func idempotent() async throws {
        let (server, configuration) = try await makeDatabase()
        try await withStore(configuration, migrate: false) { store in
            #expect(try await store.schemaVersion() == 0)
            let first = try await store.migrate()
            #expect(first.applied.map(\.version) == SchemaMigration.all.map(\.version))
            #expect(first.version == SchemaMigration.latestVersion)
            let second = try await store.migrate()
            #expect(second.applied.isEmpty)
            #expect(second.version == SchemaMigration.latestVersion)
            try await store.checkSchema()
        }
        let tables = try await server.psql(
            configuration.database,
            """
            SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_class c
            WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
            """
        )
        #expect(
            tables == """
                asnp_schema_migrations,history_deliveries,history_ledger,history_listed,history_sync,jws_headers,\
                notification_bodies,notifications,outbox,partition_owners,rejected_notifications,subscriptions
                """
        )
        // The bodies' partitions of this month and the months after it are made ahead.
        let partitions = try await server.psql(
            configuration.database,
            """
            SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'notification_bodies'::regclass
            """
        )
        let expected = try await server.psql(
            configuration.database,
            """
            SELECT string_agg('notification_bodies_' || to_char((now() AT TIME ZONE 'UTC') + ahead * interval '1 month',
                'YYYY_MM'), ',' ORDER BY ahead)
            FROM generate_series(0, \(NotificationStore.bodyMonthsAhead)) AS ahead
            """
        )
        #expect(partitions == expected)
        #expect(
            try await server.psql(configuration.database, "SELECT count(*) FROM asnp_schema_migrations")
                == String(SchemaMigration.all.count)
        )
    }

    @Test("several processes migrating at once: one applies, the others find it done")
    func concurrent() async throws {
        let (server, database) = try await makeDatabase()
        // The others wait on the lock the applying one holds: their deadline covers its migration, which a busy
        // fresh-clone run saw take more than the usual 60 s.
        var settings = database
        settings.operationTimeout = .seconds(4 * 60)
        let configuration = settings
        let reports = try await withThrowingTaskGroup(of: MigrationReport.self) { group in
            for _ in 0..<4 {
                group.addTask { try await withStore(configuration, migrate: false) { try await $0.migrate() } }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reports.filter { !$0.applied.isEmpty }.count == 1)
        #expect(reports.allSatisfy { $0.version == SchemaMigration.latestVersion })
        #expect(
            try await server.psql(configuration.database, "SELECT count(*) FROM asnp_schema_migrations")
                == String(SchemaMigration.all.count)
        )
    }

    @Test("an unmigrated database: checkSchema and writes say to run asnp migrate; once migrated, writes succeed")
    func unmigrated() async throws {
        var (_, configuration) = try await makeDatabase()
        // One connection: the write after the migration must not inherit the failed one's prepared statement.
        configuration.maximumConnections = 1
        try await withStore(configuration, migrate: false) { store in
            let error = await #expect(throws: NotificationStoreError.self) { try await store.checkSchema() }
            #expect(error?.code == .schemaNotReady)
            #expect(error?.description.contains("asnp migrate") == true)
            let entry = await StoreFixtures.entry(body: try StoreFixtures.scenario()[0].body, offset: 0)
            let writeError = await #expect(throws: NotificationStoreError.self) {
                try await store.write(NotificationBatch(entries: [entry]))
            }
            #expect(writeError?.code == .schemaNotReady)
            #expect(writeError?.isRetriable == false)
            try await store.migrate()
            let result = try await store.write(NotificationBatch(entries: [entry]))
            #expect(result.storedNotifications.count == 1)
        }
    }

    @Test(
        """
        Version 4 fills environment, bundle id and app Apple id of V2 rows stored without them (summary, external \
        purchase token, app data) as the writer now stores them, leaves other rows alone, and keys their waiting events
        """
    )
    func notificationOrigin() async throws {
        let (server, configuration) = try await makeDatabase()
        let shapes = ["shape-summary", "shape-external-token", "shape-app-data", "type-DID_RENEW-None"]
        let cases = Fixtures.v2Cases.filter { shapes.contains($0.id) }
        #expect(cases.count == shapes.count)
        let query = """
            SELECT string_agg(notification_type || ':' || coalesce(environment, '-') || ':' \
            || coalesce(bundle_id, '-') || ':' || coalesce(app_apple_id::text, '-'), ',' ORDER BY notification_type) \
            FROM notifications
            """
        try await withStore(configuration) { store in
            var entries: [NotificationBatch.Entry] = []
            for (offset, fixture) in cases.enumerated() {
                entries.append(await StoreFixtures.entry(body: fixture.body, offset: Int64(offset)))
            }
            _ = try await store.write(NotificationBatch(entries: entries))
        }
        let unkeyed = "SELECT count(*) FROM outbox WHERE stream = 'decoded' AND message_key IS NULL"
        let written = try await server.psql(configuration.database, query)
        #expect(!written.contains(":-"), "every shape names its app and environment: \(written)")
        #expect(try await server.psql(configuration.database, unkeyed) == "0")
        // As the code before version 4 stored them: nothing for the shapes without `data`, their events unkeyed.
        try await server.psql(
            configuration.database,
            """
            \(StoreFixtures.bodiesInTheirRows)
            \(StoreFixtures.columnsBeforeBodyStore)
            UPDATE notifications SET environment = NULL, bundle_id = NULL, app_apple_id = NULL \
            WHERE decoded #> '{payload,data}' IS NULL;
            UPDATE outbox SET message_key = NULL WHERE stream = 'decoded' AND message_key = notification_uuid::text;
            DELETE FROM asnp_schema_migrations WHERE version = 4
            """
        )
        #expect(try await server.psql(configuration.database, query) != written)
        #expect(try await server.psql(configuration.database, unkeyed) == "3")
        try await withStore(configuration, migrate: false) { store in
            let report = try await store.migrate()
            #expect(report.applied.map(\.version) == [4])
        }
        #expect(try await server.psql(configuration.database, query) == written)
        #expect(try await server.psql(configuration.database, unkeyed) == "0")
    }

    @Test(
        """
        Version 5 gives subscriptions stored before it their status, renewal and price fields and entitlement from \
        their newest notification, as the writer now stores them; a grace period and an expiry derive as documented
        """
    )
    func subscriptionEntitlement() async throws {
        let (server, configuration) = try await makeDatabase()
        let columns = """
            status, grace_period_expires_date, auto_renew_product_id, price, currency, offer_type, entitled, \
            entitled_until
            """
        let query = """
            SELECT string_agg(concat_ws(':', original_transaction_id, \(columns)), ',' \
            ORDER BY original_transaction_id) FROM subscriptions
            """
        try await withStore(configuration) { store in
            _ = try await store.write(NotificationBatch(entries: try await StoreFixtures.scenarioEntries()))
        }
        let written = try await server.psql(configuration.database, query)
        #expect(written.contains(":1:"), "active subscriptions: \(written)")
        // As before version 5: no such columns (nor version 8's). Two newest notifications say otherwise than active.
        let keys = try StoreFixtures.scenario().map(\.key).sorted()
        let (graceKey, expiredKey) = (try #require(keys.first), try #require(keys.last))
        try await server.psql(
            configuration.database,
            """
            \(SchemaRollback.subscriptionStateRules)
            \(StoreFixtures.bodiesInTheirRows)
            \(StoreFixtures.columnsBeforeBodyStore)
            ALTER TABLE subscriptions \(
                columns.split(separator: ",").map { "DROP COLUMN \($0.trimmingCharacters(in: .whitespaces))" }
                .joined(separator: ", ")
            );
            UPDATE notifications n SET decoded = jsonb_set(jsonb_set(decoded, '{payload,data,status}', '4'),
                '{renewalInfo,gracePeriodExpiresDate}', '1781481600123')
            FROM subscriptions s WHERE s.original_transaction_id = '\(graceKey)'
                AND n.notification_uuid = s.last_notification_uuid;
            UPDATE notifications n SET decoded = jsonb_set(decoded, '{payload,data,status}', '2')
            FROM subscriptions s WHERE s.original_transaction_id = '\(expiredKey)'
                AND n.notification_uuid = s.last_notification_uuid;
            DELETE FROM asnp_schema_migrations WHERE version = 5
            """
        )
        try await withStore(configuration, migrate: false) { store in
            let report = try await store.migrate()
            #expect(report.applied.map(\.version) == [5, 8])
        }
        let migrated = """
            SELECT original_transaction_id || ':' || status || ':' || entitled || ':' || \
            coalesce((extract(epoch FROM entitled_until) * 1000)::bigint::text, '-') FROM subscriptions \
            WHERE original_transaction_id IN ('\(graceKey)', '\(expiredKey)') ORDER BY original_transaction_id
            """
        #expect(
            try await server.psql(configuration.database, migrated)
                == "\(graceKey):4:true:1781481600123\n\(expiredKey):2:false:-"
        )
        let others = try await server.psql(configuration.database, query).split(separator: ",").filter {
            !$0.hasPrefix(graceKey) && !$0.hasPrefix(expiredKey)
        }
        #expect(
            others
                == written.split(separator: ",").filter { !$0.hasPrefix(graceKey) && !$0.hasPrefix(expiredKey) }
        )
    }

    @Test(
        """
        Version 6: bodies and decoded JSON that earlier versions kept in their rows move to notification_bodies, \
        packed, a few rows a transaction, while a writer stores more; every body and JSON comes out as the writer \
        stores them today, the events read from the outbox too, and a second move finds nothing
        """
    )
    func movingBodies() async throws {
        let entries = try await StoreFixtures.scenarioEntries()
        let (older, newer) = (Array(entries.prefix(entries.count / 2)), Array(entries.dropFirst(entries.count / 2)))
        let stored = """
            SELECT string_agg(n.notification_uuid || ':' || encode(sha256(asnp_raw_body(b.body)), 'hex') || ':'
                || md5(b.decoded::text), ',' ORDER BY n.notification_uuid)
            FROM notifications n JOIN notification_bodies b USING (notification_uuid, received_at)
            WHERE n.legacy_raw_body IS NULL AND n.legacy_decoded IS NULL
            """
        let source = KafkaTopicPartition(topic: StoreFixtures.topic, partition: 0)
        // The reference: everything written as this version writes it.
        let (server, reference) = try await makeDatabase()
        let expectedOutbox = try await withStore(reference) { store in
            _ = try await store.write(NotificationBatch(entries: older))
            _ = try await store.write(NotificationBatch(entries: newer))
            return try await store.pendingOutbox(source: source)
        }
        let expected = try await server.psql(reference.database, stored)

        let configuration = try await server.makeDatabase()
        try await withStore(configuration) { store in
            _ = try await store.write(NotificationBatch(entries: older))
        }
        try await server.psql(configuration.database, StoreFixtures.bodiesInTheirRows)
        let inRows = try await server.psql(
            configuration.database,
            "SELECT count(*) FROM notifications WHERE legacy_raw_body IS NOT NULL AND legacy_decoded IS NOT NULL"
        )
        #expect(Int(inRows) ?? 0 > 3)
        let (moved, again, outbox) = try await withStore(configuration, migrate: false) { store in
            async let moving = store.moveBodies(batchSize: 3)
            _ = try await store.write(NotificationBatch(entries: newer))
            return (try await moving, try await store.moveBodies(), try await store.pendingOutbox(source: source))
        }
        #expect("\(moved)" == inRows)
        #expect(again == 0)
        #expect(try await server.psql(configuration.database, stored) == expected)
        // The decoded events, built from the bodies (state events differ in their update times only).
        func decodedEvents(_ messages: [OutboxMessage]) -> [OutboxMessage.DecodedEvent] {
            messages.compactMap { message in
                if case .decoded(let event) = message.payload { return event }
                return nil
            }
        }
        #expect(decodedEvents(outbox).count == Set(try StoreFixtures.scenario().map(\.uuid)).count)
        #expect(decodedEvents(outbox) == decodedEvents(expectedOutbox))
    }

    @Test("an applied migration that was edited afterwards is refused")
    func editedMigration() async throws {
        let (server, configuration) = try await makeDatabase()
        try await withStore(configuration) { _ in }
        try await server.psql(configuration.database, "UPDATE asnp_schema_migrations SET checksum = 'edited'")
        try await withStore(configuration, migrate: false) { store in
            let error = await #expect(throws: NotificationStoreError.self) { try await store.migrate() }
            #expect(error?.code == .migrationFailed)
        }
    }

    @Test(
        """
        Version 7 turns the completed windows of history_sync into covered ranges of the ledger, overlapping ones \
        merged, each app, environment and filter apart; windows in progress are left to be fetched again
        """
    )
    func historyLedger() async throws {
        let (server, configuration) = try await makeDatabase()
        try await withStore(configuration) { _ in }
        try await server.psql(
            configuration.database,
            """
            DROP TABLE history_ledger; DROP TABLE history_deliveries;
            DELETE FROM asnp_schema_migrations WHERE version = 7;
            INSERT INTO history_sync (bundle_id, environment, window_start, window_end, filter, pagination_token, \
                completed_at) VALUES
                ('com.example.notes', 'Production', '2026-11-01 00:00Z', '2026-11-01 03:00Z', '', NULL, now()),
                ('com.example.notes', 'Production', '2026-11-01 02:00Z', '2026-11-01 05:00Z', '', NULL, now()),
                ('com.example.notes', 'Production', '2026-11-01 05:00Z', '2026-11-01 06:00Z', '', NULL, now()),
                ('com.example.notes', 'Production', '2026-11-02 00:00Z', '2026-11-02 01:00Z', '', NULL, now()),
                ('com.example.notes', 'Production', '2026-11-03 00:00Z', '2026-11-03 01:00Z', '', 'token', NULL),
                ('com.example.notes', 'Sandbox', '2026-11-01 00:00Z', '2026-11-01 01:00Z', 'onlyFailures', NULL, now())
            """
        )
        try await withStore(configuration, migrate: false) { store in
            let report = try await store.migrate()
            #expect(report.applied.map(\.version) == [7])
            let ledgers = try await store.historyLedgers()
            let text = ledgers.map { ledger in
                "\(ledger.key) "
                    + ledger.entries.map {
                        "\($0.state.rawValue) \($0.start.formatted(.iso8601))..\($0.end.formatted(.iso8601))"
                    }.joined(separator: ", ")
            }
            #expect(
                text == [
                    "com.example.notes Production covered 2026-11-01T00:00:00Z..2026-11-01T06:00:00Z, "
                        + "covered 2026-11-02T00:00:00Z..2026-11-02T01:00:00Z",
                    "com.example.notes Sandbox [onlyFailures] covered 2026-11-01T00:00:00Z..2026-11-01T01:00:00Z",
                ]
            )
        }
    }
}
