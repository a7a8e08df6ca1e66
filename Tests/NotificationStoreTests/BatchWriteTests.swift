import AppStoreModels
import AppStoreTestSupport
import Crypto
import Foundation
import KafkaClient
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing

@Suite("Batch writes", .tags(.store))
struct BatchWriteTests {
    @Test(
        "the same batch written twice stores each notification once; the second write reports duplicates"
    )
    func idempotent() async throws {
        let (server, configuration) = try await makeDatabase()
        let entries = try await StoreFixtures.scenarioEntries()
        let uniqueUUIDs = Set(try StoreFixtures.scenario().map(\.uuid))
        let (first, second) = try await withStore(configuration) { store in
            (
                try await store.write(NotificationBatch(entries: entries)),
                try await store.write(NotificationBatch(entries: entries))
            )
        }
        #expect(Set(first.storedNotifications.map { $0.uuidString.lowercased() }) == uniqueUUIDs)
        #expect(first.storedNotifications.count == uniqueUUIDs.count)
        #expect(first.duplicateNotifications == entries.count - uniqueUUIDs.count)
        #expect(second.storedNotifications.isEmpty)
        #expect(second.duplicateNotifications == entries.count)
        #expect(second.subscriptionChanges.isEmpty)
        #expect(second.outbox.isEmpty)
        let database = configuration.database
        #expect(try await server.psql(database, "SELECT count(*) FROM notifications") == "\(uniqueUUIDs.count)")
        // One decoded event per new notification, one state event per subscription changed.
        #expect(
            try await server.psql(database, "SELECT count(*) FROM outbox WHERE stream = 'decoded'")
                == "\(uniqueUUIDs.count)"
        )
        #expect(
            try await server.psql(database, "SELECT count(*) FROM outbox WHERE stream = 'subscription_state'")
                == "\(first.subscriptionChanges.count)"
        )
        #expect(first.outbox.map(\.id) == first.outbox.map(\.id).sorted())
    }

    @Test("without prepared statements (behind a transaction-mode pooler) a batch is stored the same")
    func unpreparedWritesTheSame() async throws {
        let entries = try await StoreFixtures.scenarioEntries()
        var results: [BatchWriteResult] = []
        var tables: [String] = []
        for prepares in [true, false] {
            var (server, configuration) = try await makeDatabase()
            configuration.usesPreparedStatements = prepares
            // Twice: the second write finds duplicates (and, prepared, reuses the connection's statement).
            results.append(
                try await withStore(configuration) { store in
                    _ = try await store.write(NotificationBatch(entries: Array(entries.prefix(entries.count / 2))))
                    return try await store.write(NotificationBatch(entries: entries))
                }
            )
            tables.append(
                try await server.psql(
                    configuration.database,
                    """
                    SELECT (SELECT string_agg(notification_uuid::text || decoded::text, ',' ORDER BY notification_uuid)
                        FROM notifications_decoded)
                    || (SELECT string_agg(original_transaction_id || last_notification_uuid::text, ','
                        ORDER BY original_transaction_id) FROM subscriptions)
                    || (SELECT count(*) FROM outbox)::text
                    """
                )
            )
        }
        #expect(!results[0].storedNotifications.isEmpty && results[0].duplicateNotifications > 0)
        #expect(results[0].storedNotifications == results[1].storedNotifications)
        #expect(results[0].duplicateNotifications == results[1].duplicateNotifications)
        #expect(results[0].subscriptionChanges.count == results[1].subscriptionChanges.count)
        #expect(tables[0] == tables[1])
    }

    @Test(
        """
        stored columns: facts and Kafka coordinates in notifications; the decoded JSON without the JWS forms and the \
        exact raw body (packed, rebuilt by asnp_raw_body) in notification_bodies
        """
    )
    func columns() async throws {
        let (server, configuration) = try await makeDatabase()
        let line = try StoreFixtures.scenario()[0]
        let entry = await StoreFixtures.entry(body: line.body, offset: 41, partition: 3)
        guard case .verified(.v2(let decoded)) = entry.verdict else {
            Issue.record("the fixture did not verify")
            return
        }
        _ = try await withStore(configuration) { try await $0.write(NotificationBatch(entries: [entry])) }
        let row = try await server.psql(
            configuration.database,
            """
            SELECT concat_ws('|', version, notification_type, subtype, environment, bundle_id, app_apple_id,
                original_transaction_id, transaction_id, product_id,
                (extract(epoch FROM signed_date) * 1000)::bigint, auto_renew_status, kafka_topic, kafka_partition,
                kafka_offset, convert_from(asnp_raw_body(b.body), 'UTF8') = \(sqlLiteral(line.body)),
                b.decoded #>> '{payload,data,signedTransactionInfo}' IS NULL,
                b.decoded #>> '{transactionInfo,originalTransactionId}')
            FROM notifications n JOIN notification_bodies b USING (notification_uuid, received_at)
            WHERE notification_uuid = '\(line.uuid)' AND n.legacy_raw_body IS NULL AND n.legacy_decoded IS NULL
            """
        )
        let facts = NotificationFacts(decoded)
        let expected = [
            "2", line.type, facts.subtype ?? "", "Sandbox", Fixtures.bundleId, "\(Fixtures.appAppleId)",
            line.key, facts.transactionId ?? "", facts.productId ?? "", "\(facts.signedDate ?? 0)",
            facts.autoRenewStatus.map(String.init) ?? "", StoreFixtures.topic, "3", "41", "t", "t", line.key,
        ]
        #expect(row.split(separator: "|", omittingEmptySubsequences: false).map(String.init) == expected)
    }

    @Test("V1: a deterministic id from the body, the shared secret redacted, dedupe of Apple's retries, one state")
    func v1() async throws {
        let (server, configuration) = try await makeDatabase()
        let body = try #require(Fixtures.v1Cases.first { $0.kind == "valid" }).body
        #expect(body.contains(Fixtures.sharedSecret))
        let first = await StoreFixtures.entry(body: body, offset: 1)
        let retry = await StoreFixtures.entry(body: body, offset: 2)
        guard case .verified(.v1) = first.verdict else {
            Issue.record("the V1 fixture did not verify")
            return
        }
        let result = try await withStore(configuration) {
            try await $0.write(NotificationBatch(entries: [first, retry]))
        }
        #expect(result.storedNotifications.count == 1)
        #expect(result.duplicateNotifications == 1)
        let stored = try await server.psql(
            configuration.database,
            """
            SELECT notification_uuid || '|' || convert_from(asnp_raw_body(body), 'UTF8') FROM notification_bodies
            """
        )
        #expect(!stored.contains(Fixtures.sharedSecret))
        #expect(stored.contains("\"password\": \"<redacted>\""))
        // Version 8 (custom) UUID from the body's SHA-256.
        let uuid = try #require(result.storedNotifications.first).uuidString.lowercased()
        #expect(stored.hasPrefix(uuid + "|"))
        #expect(Array(uuid)[14] == "8")
        #expect(try await server.psql(configuration.database, "SELECT signed_date IS NULL FROM notifications") == "t")
        // The subscription's state from the receipt (Docs/entitlement.md, V1), once for the retry too.
        #expect(
            try await server.psql(
                configuration.database,
                "SELECT original_transaction_id || '|' || transaction_id || '|' || product_type FROM subscriptions"
            ) == "6000000000|172271685121515|Auto-Renewable Subscription"
        )
        #expect(result.subscriptionChanges.count == 1)
    }

    @Test(
        """
        the write's outbox messages are what reading the outbox gives, byte for byte: the scenario, every valid V2 \
        and V1 fixture
        """
    )
    func outboxMessagesFromMemory() async throws {
        let (_, configuration) = try await makeDatabase()
        var scenarioAndFixtures = try await StoreFixtures.scenarioEntries()
        for (index, fixture) in (Fixtures.v2Cases + Fixtures.v1Cases).filter({ $0.kind == "valid" }).enumerated() {
            scenarioAndFixtures.append(await StoreFixtures.entry(body: fixture.body, offset: 1_000 + Int64(index)))
        }
        let entries = scenarioAndFixtures
        let (result, pending) = try await withStore(configuration) { store in
            let result = try await store.write(NotificationBatch(entries: entries))
            let pending = try await store.pendingOutbox(
                source: KafkaTopicPartition(topic: StoreFixtures.topic, partition: 0),
                limit: 10_000
            )
            return (result, pending)
        }
        let written = try #require(result.outboxMessages)
        #expect(written.count == result.outbox.count)
        #expect(written.count == pending.count)
        #expect(written.contains { $0.stream == .subscriptionState })
        for (mine, read) in zip(written, pending) {
            #expect(mine.id == read.id)
            #expect(mine.stream == read.stream)
            #expect(mine.key == read.key)
            switch (mine.payload, read.payload) {
            case (.decoded(let mine), .decoded(let read)):
                #expect(mine == read)
                #expect(!mine.json.isEmpty)
            case (.subscriptionState(let mine), .subscriptionState(let read)):
                #expect(mine == read)
            default:
                Issue.record("payloads differ in kind: \(mine.payload) against \(read.payload)")
            }
        }
    }

    @Test("a notification whose JSON this version cannot build from its body is published with its stored column")
    func outboxMessageOfAnEarlierVersion() async throws {
        let (server, configuration) = try await makeDatabase()
        // The first two lines are one notification and its retry: two notifications.
        let entries = try await StoreFixtures.scenarioEntries().prefix(3)
        let uuid = try StoreFixtures.scenario()[0].uuid
        let pending = try await withStore(configuration) { store in
            _ = try await store.write(NotificationBatch(entries: Array(entries)))
            // As a body stored by an earlier version might be, in its row: its JSON cannot be built byte for byte.
            _ = try await server.psql(
                configuration.database,
                """
                UPDATE notifications SET legacy_raw_body = '{"signedPayload": 1}',
                    legacy_decoded = '{"payload": {"stored": true}}'
                WHERE notification_uuid = '\(uuid)';
                DELETE FROM notification_bodies WHERE notification_uuid = '\(uuid)'
                """
            )
            return try await store.pendingOutbox(source: KafkaTopicPartition(topic: StoreFixtures.topic, partition: 0))
        }
        let events = pending.compactMap { message -> OutboxMessage.DecodedEvent? in
            if case .decoded(let event) = message.payload { return event }
            return nil
        }
        #expect(events.count == 2)
        #expect(
            events.first { $0.notificationUUID.uuidString.lowercased() == uuid }?.json
                == #"{"payload": {"stored": true}}"#
        )
        #expect(events.allSatisfy { $0.json.hasPrefix(#"{"payload":"#) })
    }

    @Test("a batch that stored dead letters leaves its outbox messages to be read from the table")
    func outboxMessagesWithDeadLetters() async throws {
        let (_, configuration) = try await makeDatabase()
        let valid = try await StoreFixtures.scenarioEntries().prefix(3)
        let hostile = try #require(Fixtures.v2Cases.first { $0.kind != "valid" })
        let entries = Array(valid) + [await StoreFixtures.entry(body: hostile.body, offset: 900)]
        let result = try await withStore(configuration) { store in
            try await store.write(NotificationBatch(entries: entries))
        }
        #expect(result.outbox.contains { $0.stream == .deadLetter })
        #expect(result.outboxMessages == nil)
    }

    @Test("rejected bodies: stored with status and reason, once per Kafka coordinates, a dead-letter outbox row each")
    func rejected() async throws {
        let (server, configuration) = try await makeDatabase()
        let hostile = Fixtures.v2Cases.filter { $0.kind != "valid" }.prefix(5)
        var entries: [NotificationBatch.Entry] = []
        for (index, fixture) in hostile.enumerated() {
            entries.append(await StoreFixtures.entry(body: fixture.body, offset: Int64(100 + index)))
        }
        let v1Wrong = try #require(Fixtures.v1Cases.first { $0.expectedStatus == "INVALID_PASSWORD" })
        entries.append(await StoreFixtures.entry(body: v1Wrong.body, offset: 200))
        let rejectedEntries = entries
        let (first, again) = try await withStore(configuration) { store in
            (
                try await store.write(NotificationBatch(entries: rejectedEntries + [rejectedEntries[0]])),
                try await store.write(NotificationBatch(entries: rejectedEntries))
            )
        }
        #expect(first.storedRejections == entries.count)
        #expect(first.duplicateRejections == 1)
        #expect(first.outbox.filter { $0.stream == .deadLetter }.count == entries.count)
        #expect(first.outbox.allSatisfy { $0.rejectedID != nil && $0.messageKey?.hasPrefix("key-") == true })
        #expect(again.storedRejections == 0)
        #expect(again.duplicateRejections == entries.count)
        let statuses = try await server.psql(
            configuration.database,
            "SELECT string_agg(status, ',' ORDER BY kafka_offset) FROM rejected_notifications"
        )
        #expect(statuses == (hostile.map(\.expectedStatus) + ["INVALID_PASSWORD"]).joined(separator: ","))
        #expect(try await server.psql(configuration.database, "SELECT count(*) FROM notifications") == "0")
        let storedV1 = try await server.psql(
            configuration.database,
            """
            SELECT convert_from(asnp_raw_body(body), 'UTF8') FROM rejected_notifications
            WHERE kafka_offset = 200 AND legacy_raw_body IS NULL
            """
        )
        #expect(storedV1.contains("<redacted>"))
        #expect(
            try await server.psql(
                configuration.database,
                "SELECT headers->>'version' FROM rejected_notifications LIMIT 1"
            )
                == "2"
        )
        // A batch of rejections alone stores the headers its packed bodies refer to.
        #expect(
            try await server.psql(
                configuration.database,
                """
                SELECT string_agg(encode(sha256(asnp_raw_body(body)), 'hex'), ',' ORDER BY kafka_offset)
                FROM rejected_notifications WHERE kafka_offset < 200
                """
            ) == hostile.map { sha256Hex($0.body) }.joined(separator: ",")
        )
    }

    @Test(
        "a batch of notifications and rejected bodies: every body, either kind, comes back byte for byte"
    )
    func mixedBodiesRebuild() async throws {
        let (server, configuration) = try await makeDatabase()
        let fixtures =
            Array(Fixtures.v2Cases.filter { $0.kind == "valid" }.prefix(3))
            + Fixtures.v2Cases.filter { $0.kind != "valid" }.prefix(3)
        var entries: [NotificationBatch.Entry] = []
        for (index, fixture) in fixtures.enumerated() {
            entries.append(await StoreFixtures.entry(body: fixture.body, offset: Int64(index)))
        }
        let batch = NotificationBatch(entries: entries)
        let result = try await withStore(configuration) { store in try await store.write(batch) }
        #expect(result.storedNotifications.count == 3 && result.storedRejections == 3)
        let bodies = try await server.psql(
            configuration.database,
            """
            SELECT string_agg(digest, ',' ORDER BY kafka_offset) FROM (
                SELECT n.kafka_offset, encode(sha256(asnp_raw_body(b.body)), 'hex') AS digest
                FROM notifications n JOIN notification_bodies b USING (notification_uuid, received_at)
                UNION ALL
                SELECT kafka_offset, encode(sha256(asnp_raw_body(body)), 'hex') FROM rejected_notifications
            ) AS stored
            """
        )
        #expect(bodies == fixtures.map { sha256Hex($0.body) }.joined(separator: ","))
    }

    @Test("read helpers: a subscription's state and its notifications in signedDate order")
    func readHelpers() async throws {
        let (_, configuration) = try await makeDatabase()
        let lines = try StoreFixtures.scenario().filter { $0.key == "5000000003" && $0.dup != true }
        var entries: [NotificationBatch.Entry] = []
        for (offset, line) in lines.enumerated().reversed() {
            entries.append(await StoreFixtures.entry(body: line.body, offset: Int64(offset)))
        }
        let newestFirst = entries
        let (state, timeline, missing) = try await withStore(configuration) { store in
            _ = try await store.write(NotificationBatch(entries: newestFirst))
            return (
                try await store.subscription(originalTransactionId: "5000000003"),
                try await store.notifications(originalTransactionId: "5000000003"),
                try await store.subscription(originalTransactionId: "no-such-subscription")
            )
        }
        #expect(missing == nil)
        #expect(state?.lastNotificationType == "EXPIRED")
        #expect(state?.lastNotificationUUID.uuidString.lowercased() == lines.last?.uuid)
        #expect(timeline.map(\.notificationType) == lines.map(\.type))
        #expect(timeline.map { $0.notificationUUID.uuidString.lowercased() } == lines.map(\.uuid))
    }
}

/// A SQL string literal.
func sqlLiteral(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}

/// The SHA-256 of `text`'s UTF-8, in hex, as PostgreSQL's `encode(sha256(...), 'hex')` writes it.
private func sha256Hex(_ text: String) -> String {
    SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
}
