import AppStoreModels
import AppStoreTestSupport
import AppStoreVerification
import Crypto
import Foundation
import KafkaClient
import Logging
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import SwiftASN1
import VerificationTestSupport
import X509

/// Runs `body` with a store on `configuration` whose pool runs for the duration.
func withStore<Result: Sendable>(
    _ configuration: NotificationStoreConfiguration,
    migrate: Bool = true,
    _ body: @Sendable (NotificationStore) async throws -> Result
) async throws -> Result {
    var logger = Logger(label: "asnp.store.test")
    logger.logLevel = .warning
    return try await NotificationStore.withRunning(configuration: configuration, logger: logger) { store in
        if migrate { try await store.migrate() }
        return try await body(store)
    }
}

/// A fresh, migrated-on-use database on the shared server.
func makeDatabase() async throws -> (server: TestPostgresServer, configuration: NotificationStoreConfiguration) {
    let server = try await TestPostgresServer.shared()
    return (server, try await server.makeDatabase())
}

/// One line of ../shared/fixtures/scenario.jsonl.
struct ScenarioLine: Decodable {
    var key: String
    var seq: Int
    var uuid: String
    var type: String
    var body: String
    var dup: Bool?
}

/// Fixture bodies verified as the worker would, turned into batch entries with Kafka coordinates.
enum StoreFixtures {
    static let topic = PipelineTopics.raw

    static let verifier = try! TestVerifiers.fixtures()

    static func scenario() throws -> [ScenarioLine] {
        try Fixtures.data("scenario.jsonl").split(separator: UInt8(ascii: "\n")).map {
            try JSONDecoder().decode(ScenarioLine.self, from: Data($0))
        }
    }

    /// Puts every notification's body and decoded JSON back in its row, as versions before schema 6 stored them.
    static let bodiesInTheirRows = """
        UPDATE notifications n SET legacy_raw_body = convert_from(asnp_raw_body(b.body), 'UTF8'),
            legacy_decoded = b.decoded
        FROM notification_bodies b WHERE b.notification_uuid = n.notification_uuid AND b.received_at = n.received_at;
        DELETE FROM notification_bodies;
        """

    /// Gives the columns ``bodiesInTheirRows`` fills their names before schema 6, for re-running earlier migrations.
    static let columnsBeforeBodyStore = """
        ALTER TABLE notifications RENAME COLUMN legacy_raw_body TO raw_body;
        ALTER TABLE notifications RENAME COLUMN legacy_decoded TO decoded;
        """

    /// Each subscription's last notification type as stored, to compare with ``scenarioFinal()``.
    static func finalTypes(_ server: TestPostgresServer, _ database: String) async throws -> [String: String] {
        let rows = try await server.psql(
            database,
            "SELECT original_transaction_id || '=' || last_notification_type FROM subscriptions"
        )
        return Dictionary(
            uniqueKeysWithValues: rows.split(separator: "\n").map {
                let parts = $0.split(separator: "=")
                return (String(parts[0]), String(parts[1]))
            }
        )
    }

    static func scenarioFinal() throws -> [String: String] {
        try JSONDecoder().decode([String: String].self, from: Fixtures.data("scenario-final.json"))
    }

    /// Verifies `body` and makes the batch entry the worker would, read from `offset` of `partition`, received on
    /// 2026-01-01 (plus `offset` seconds) unless `receivedAt` says otherwise.
    static func entry(
        body: String,
        offset: Int64,
        partition: Int32 = 0,
        receivedAt: Date? = nil,
        verifier: NotificationVerifier = Self.verifier
    ) async -> NotificationBatch.Entry {
        let raw = RawNotification(
            body: Array(body.utf8),
            key: "key-\(offset)",
            headers: ["version": "2", "environment": "sandbox"],
            receivedAt: receivedAt ?? Date(timeIntervalSince1970: 1_767_225_600 + Double(offset)),
            source: KafkaTopicPartitionOffset(topic: topic, partition: partition, offset: offset)
        )
        switch await verifier.verify(body: Array(body.utf8)) {
        case .verified(let notification):
            return NotificationBatch.Entry(raw: raw, verdict: .verified(notification))
        case .rejected(let error):
            return NotificationBatch.Entry(
                raw: raw,
                verdict: .rejected(status: error.code.rawValue, reason: error.reason)
            )
        }
    }

    /// The scenario's lines (duplicates included) as entries at offsets 0, 1, 2...
    static func scenarioEntries() async throws -> [NotificationBatch.Entry] {
        var entries: [NotificationBatch.Entry] = []
        for (offset, line) in try scenario().enumerated() {
            entries.append(await entry(body: line.body, offset: Int64(offset)))
        }
        return entries
    }
}
