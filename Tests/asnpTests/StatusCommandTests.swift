import AppStoreTestSupport
import AppStoreVerification
import Foundation
import KafkaClient
import LoadGeneration
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import SwiftASN1
import Testing
import Worker
import X509

@testable import asnp

@Suite("asnp status and asnp subscription show: what the tables hold, as text and JSON", .tags(.process))
struct StatusCommandTests {
    struct ScenarioLine: Decodable {
        var key: String
        var uuid: String
        var body: String
    }

    @Test("After the scenario and one hostile body: counts, a subscription's state and timeline, an unknown one")
    func statusAndSubscription() async throws {
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let lines = try String(contentsOf: Fixtures.directory.appendingPathComponent("scenario.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { try JSONDecoder().decode(ScenarioLine.self, from: Data($0.utf8)) }
        let hostile = try #require(Fixtures.v2Cases.first { $0.expectedStatus != "OK" })
        let bodies = lines.map(\.body) + [hostile.body]
        let messages = bodies.enumerated().map { index, body in
            let raw = KafkaProducerMessage.rawNotification(
                body: Data(body.utf8),
                app: "notes",
                topic: PipelineTopics.raw
            )
            return KafkaMessage(
                topic: raw.topic,
                partition: 0,
                offset: Int64(index),
                key: raw.key,
                value: raw.value,
                headers: raw.headers,
                timestamp: nil
            )
        }
        let verifier = RawBatchVerifier(
            directory: VerifierDirectory(
                apps: [PipelineApp(name: "notes", bundleID: Fixtures.bundleId, appAppleID: Fixtures.appAppleId)],
                chainVerifier: ChainVerifier(
                    configuration: .init(trustedRoots: [
                        try Certificate(derEncoded: Array(Fixtures.data("test-root.der")))
                    ])
                )
            ),
            parallelism: 2
        )
        let batch = try await verifier.batch(for: messages)
        try await NotificationStore.withRunning(configuration: database, logger: Logger(label: "test.status")) {
            _ = try await $0.migrate()
            _ = try await $0.write(batch)
        }
        let configFile = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-status-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: configFile) }
        let url = server.url(database: database.database)
        try Data(#"{"database": {"url": "\#(url)"}}"#.utf8).write(to: configFile)

        // status --json: the counts, and no Kafka section without Kafka settings.
        let status = try await ASNPProcess.run(["status", "--config", configFile.path, "--json"])
        #expect(status.status == 0, "\(status.standardError)")
        let report = try #require(status.jsonLines.first)
        let counts = try #require(report["counts"] as? [String: Any])
        let byType = try #require(counts["notificationsByType"] as? [String: Int])
        #expect(byType.values.reduce(0, +) == Set(lines.map(\.uuid)).count)
        let final = try JSONDecoder().decode([String: String].self, from: Fixtures.data("scenario-final.json"))
        let byState = try #require(counts["subscriptionsByLastType"] as? [String: Int])
        #expect(byState == Dictionary(grouping: final.values, by: { $0 }).mapValues(\.count))
        #expect(counts["rejectedByStatus"] as? [String: Int] == [hostile.expectedStatus: 1])
        #expect(counts["rejectedNotReplayed"] as? Int == 1)
        #expect(report["kafka"] == nil)
        let text = try await ASNPProcess.run(["status", "--config", configFile.path])
        #expect(text.standardOutput.contains("rejected        1 (1 not replayed)"))

        // subscription show: the state scenario-final.json names, every notification of the subscription in order.
        let (key, type) = try #require(final.max { $0.key < $1.key })
        let shown = try await ASNPProcess.run([
            "subscription", "show", key, "--config", configFile.path, "--json",
        ])
        #expect(shown.status == 0, "\(shown.standardError)")
        let subscription = try #require(shown.jsonLines.first)
        let state = try #require(subscription["state"] as? [String: Any])
        #expect(state["lastNotificationType"] as? String == type)
        let timeline = try #require(subscription["notifications"] as? [[String: Any]])
        #expect(timeline.count == Set(lines.filter { $0.key == key }.map(\.uuid)).count)
        #expect(timeline.last?["notificationType"] as? String == type)
        let shownText = try await ASNPProcess.run(["subscription", "show", key, "--config", configFile.path])
        #expect(shownText.standardOutput.hasPrefix("subscription \(key) (\(Fixtures.bundleId), Sandbox)"))
        #expect(shownText.standardOutput.contains("state        \(type)"))
        let entitlement = try #require(state["entitled"] as? Bool, "the scenario's notifications carry a status")
        // Access now: a period that ended is no access, whatever the newest notification said then.
        let until = (state["entitledUntil"] as? Double).map { Date(timeIntervalSinceReferenceDate: $0) }
        let line =
            !entitlement
            ? "entitled     no (status "
            : until.map { $0 > Date() ? "entitled     yes until " : "entitled     no: access ended " }
                ?? "entitled     yes, with no end"
        #expect(shownText.standardOutput.contains(line), "\(shownText.standardOutput)")

        // A customer: every subscription of an app account token, access now in any of them.
        let keys = final.keys.sorted()
        try await server.psql(
            database.database,
            "UPDATE subscriptions SET app_account_token = 'customer-1' "
                + "WHERE original_transaction_id IN ('\(keys[0])', '\(keys[1])')"
        )
        let customer = try await ASNPProcess.run([
            "subscription", "show", "--account-token", "customer-1", "--config", configFile.path, "--json",
        ])
        #expect(customer.status == 0, "\(customer.standardError)")
        let customerStates = try #require(customer.jsonLines.first?["subscriptions"] as? [[String: Any]])
        #expect(customerStates.compactMap { $0["originalTransactionId"] as? String } == [keys[0], keys[1]])
        let customerText = try await ASNPProcess.run([
            "subscription", "show", "--account-token", "customer-1", "--config", configFile.path,
        ])
        #expect(customerText.standardOutput.hasPrefix("customer customer-1: "))
        #expect(customerText.standardOutput.contains("2 subscription(s)"))
        let stranger = try await ASNPProcess.run([
            "subscription", "show", "--account-token", "nobody", "--config", configFile.path,
        ])
        #expect(stranger.status == 1)
        let both = try await ASNPProcess.run([
            "subscription", "show", keys[0], "--account-token", "customer-1", "--config", configFile.path,
        ])
        #expect(both.status == 64 || both.status == 2, "a usage error: \(both.status)")

        // state republish: one state event per subscription (or per key) queued in the outbox; no worker runs
        // here, so a wait for their publication runs out.
        let outboxStates = "SELECT count(*) FROM outbox WHERE stream = 'subscription_state'"
        let statesBefore = Int(try await server.psql(database.database, outboxStates)) ?? -1
        let one = try await ASNPProcess.run(["state", "republish", "--key", keys[0], "--config", configFile.path])
        #expect(one.status == 0, "\(one.standardError)")
        #expect(one.standardOutput.hasPrefix("queued 1 subscription state(s)"))
        let all = try await ASNPProcess.run(["state", "republish", "--config", configFile.path])
        #expect(all.standardOutput.hasPrefix("queued \(final.count) subscription state(s)"))
        #expect(Int(try await server.psql(database.database, outboxStates)) == statesBefore + 1 + final.count)
        let waited = try await ASNPProcess.run([
            "state", "republish", "--key", keys[0], "--wait", "--timeout", "1", "--config", configFile.path,
        ])
        #expect(waited.status == 1)
        #expect(waited.standardError.contains("1 state(s) still unpublished after 1 s"))

        let unknown = try await ASNPProcess.run(["subscription", "show", "404", "--config", configFile.path])
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("no notification of subscription 404 is stored"))
    }
}
