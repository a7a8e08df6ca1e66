import AppStoreModels
import Crypto
import Foundation
import LocalPostgres

/// The check a fault test ends with: every body the ingress answered 200 for is accounted for in the database, and
/// each subscription's newest notification is the one the bodies say, recomputed here from them.
///
/// - A V2 body is either stored (its `notificationUUID` in `notifications` once, with the body byte for byte) or
///   rejected (one `rejected_notifications` row per delivery: each is its own Kafka message); never both, never
///   neither. A duplicate delivery of a stored body adds nothing.
/// - Other bodies are either rejected as they came (once per delivery) or V1 notifications, which are stored with
///   the shared secret redacted, so not comparable byte for byte: those are expected valid, as many version-1 rows
///   as distinct V1 bodies.
/// - No other rows: nothing stored or rejected that was not posted.
/// - Each subscription's last notification is the stored notification with the newest (`signedDate`, UUID),
///   decoded here without verification from the posted bodies; a V1 one stands at the latest moment it reports
///   (Docs/entitlement.md, V1), its UUID derived from its body as the store derives it.
package struct PipelineReconciliation: Sendable {
    /// What does not add up; empty when everything does.
    package private(set) var problems: [String] = []
    /// Distinct bodies found stored and bodies found rejected (with their deliveries).
    package private(set) var stored = 0
    package private(set) var rejectedDeliveries = 0

    /// Reconciles `accepted` (every body answered 200, repeated as often as it was posted) with the database that
    /// `query` reads (SQL in, `psql -At` output out). `unanswered` are the posts answered otherwise (or not at all),
    /// a body for each: such a post may still have reached the topic — the broker stored it, its acknowledgement was
    /// lost, the ingress answered 503 at its deadline — so each may add one delivery. Apple posts such a body again
    /// until it is answered 200, so each is expected among `accepted` too.
    package static func check(
        accepted: [String],
        unanswered: [String] = [],
        query: @Sendable (String) async throws -> String
    ) async throws -> PipelineReconciliation {
        var result = PipelineReconciliation()
        var deliveries: [String: Int] = [:]
        for body in accepted { deliveries[body, default: 0] += 1 }
        var possible: [String: Int] = [:]
        for body in unanswered { possible[body, default: 0] += 1 }

        let storedRows = try await rows(
            query(
                """
                SELECT n.notification_uuid, n.version,
                    encode(sha256(COALESCE(convert_to(n.legacy_raw_body, 'UTF8'), asnp_raw_body(b.body))), 'hex')
                FROM notifications n
                LEFT JOIN notification_bodies b USING (notification_uuid, received_at)
                """
            )
        )
        var storedByUUID: [String: (version: String, hash: String)] = [:]
        for row in storedRows where row.count == 3 { storedByUUID[row[0]] = (row[1], row[2]) }
        var rejectedByHash: [String: Int] = [:]
        for row in try await rows(
            query(
                """
                SELECT encode(sha256(COALESCE(legacy_raw_body, asnp_raw_body(body))), 'hex'), count(*)
                FROM rejected_notifications GROUP BY 1
                """
            )
        ) where row.count == 2 {
            rejectedByHash[row[0]] = Int(row[1]) ?? 0
        }
        var subscriptions: [String: String] = [:]
        for row in try await rows(query("SELECT original_transaction_id, last_notification_uuid FROM subscriptions"))
        where row.count == 2 {
            subscriptions[row[0]] = row[1]
        }

        var expectedUUIDs = Set<String>()
        var matchedRejections = 0
        var distinctV1 = 0
        var newest: [String: (signedDate: Int64, uuid: String)] = [:]
        for (body, count) in deliveries {
            let hash = SHA256.hash(data: Data(body.utf8)).map { String(format: "%02x", $0) }.joined()
            let rejected = rejectedByHash[hash] ?? 0
            let deliveryCounts = count...(count + (possible[body] ?? 0))
            guard let facts = V2Facts(body: body) else {
                // Not a V2 notification: rejected as it came (malformed), or a V1 notification (stored redacted).
                if rejected > 0 {
                    if !deliveryCounts.contains(rejected) {
                        result.problems.append("a body delivered \(count) times was rejected \(rejected) times")
                    }
                    result.rejectedDeliveries += rejected
                    matchedRejections += rejected
                } else {
                    distinctV1 += 1
                    if let v1 = try? JSONDecoder().decode(StatusUpdateNotification.self, from: Data(body.utf8)),
                        let original = v1.resolvedOriginalTransactionId, let moment = v1.stateOrderMilliseconds
                    {
                        let uuid = Self.v1UUID(body)
                        if newest[original].map({ ($0.signedDate, $0.uuid) < (moment, uuid) }) ?? true {
                            newest[original] = (moment, uuid)
                        }
                    }
                }
                continue
            }
            let stored = storedByUUID[facts.uuid]?.hash == hash
            switch (stored, rejected) {
            case (true, 0):
                result.stored += 1
                expectedUUIDs.insert(facts.uuid)
                if let original = facts.originalTransactionId,
                    newest[original].map({ ($0.signedDate, $0.uuid) < (facts.signedDate, facts.uuid) }) ?? true
                {
                    newest[original] = (facts.signedDate, facts.uuid)
                }
            case (true, _):
                result.problems.append("\(facts.uuid): stored and also rejected \(rejected) times")
            case (false, 0):
                result.problems.append("\(facts.uuid): answered 200 \(count) times, neither stored nor rejected")
            case (false, _) where deliveryCounts.contains(rejected):
                result.rejectedDeliveries += rejected
                matchedRejections += rejected
            case (false, _):
                result.problems.append("\(facts.uuid): delivered \(count) times but rejected \(rejected) times")
                matchedRejections += rejected
            }
        }

        let v2Rows = Set(storedByUUID.filter { $0.value.version == "2" }.keys)
        let unexpected = v2Rows.subtracting(expectedUUIDs)
        if !unexpected.isEmpty {
            result.problems.append("V2 notifications stored that no accepted body explains: \(unexpected.sorted())")
        }
        let v1Rows = storedByUUID.values.filter { $0.version == "1" }.count
        if v1Rows != distinctV1 {
            result.problems.append("\(distinctV1) distinct V1 bodies accepted, \(v1Rows) V1 notifications stored")
        }
        let rejectedRows = rejectedByHash.values.reduce(0, +)
        if rejectedRows != matchedRejections {
            result.problems.append("\(rejectedRows) rejected rows, \(matchedRejections) explained by accepted bodies")
        }
        let expectedSubscriptions = newest.mapValues(\.uuid)
        if subscriptions != expectedSubscriptions {
            let wrong = Set(subscriptions.keys).union(expectedSubscriptions.keys).filter {
                subscriptions[$0] != expectedSubscriptions[$0]
            }
            result.problems.append(
                "subscriptions differ from last-writer-wins over the stored bodies for \(wrong.count): "
                    + wrong.sorted().prefix(5).map {
                        "\($0) has \(subscriptions[$0] ?? "none"), expected \(expectedSubscriptions[$0] ?? "none")"
                    }.joined(separator: "; ")
            )
        }
        return result
    }

    /// Reconciles with database `database` of the PostgreSQL server at 127.0.0.1:`port` (an `asnp dev`'s, say).
    package static func check(accepted: [String], port: Int, database: String) async throws -> PipelineReconciliation {
        let server = LocalPostgresServer(directory: "", port: port)
        return try await check(accepted: accepted) { sql in
            try await LocalPostgresServer.offPool { try server.psql(database, sql) }
        }
    }

    /// Reconciles with database `database` of a test server.
    package static func check(
        accepted: [String],
        unanswered: [String] = [],
        server: TestPostgresServer,
        database: String
    ) async throws -> PipelineReconciliation {
        try await check(accepted: accepted, unanswered: unanswered) { sql in try await server.psql(database, sql) }
    }

    /// `psql -At` output as rows of cells.
    private static func rows(_ output: String) -> [[String]] {
        output.split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }

    /// A V1 notification's UUID as the store derives it: the body's SHA-256, its first 16 bytes marked version 8.
    static func v1UUID(_ body: String) -> String {
        var digest = Array(SHA256.hash(data: Data(body.utf8)).prefix(16))
        digest[6] = (digest[6] & 0x0F) | 0x80
        digest[8] = (digest[8] & 0x3F) | 0x80
        let hex = digest.map { String(format: "%02x", $0) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(
                hex[
                    hex.index(
                        hex.startIndex,
                        offsetBy: range.lowerBound
                    )..<hex.index(hex.startIndex, offsetBy: range.upperBound)
                ]
            )
        }
        return parts.joined(separator: "-")
    }
}

/// What reconciliation needs from a V2 body, decoded without verification.
private struct V2Facts {
    var uuid: String
    var signedDate: Int64
    var originalTransactionId: String?

    init?(body: String) {
        guard let outer = Self.object(Data(body.utf8)), let signed = outer["signedPayload"] as? String,
            let payload = Self.jwsPayload(signed), let uuid = payload["notificationUUID"] as? String
        else { return nil }
        self.uuid = uuid.lowercased()
        self.signedDate = (payload["signedDate"] as? NSNumber)?.int64Value ?? 0
        let data = payload["data"] as? [String: Any]
        let transaction = (data?["signedTransactionInfo"] as? String).flatMap(Self.jwsPayload)
        self.originalTransactionId = transaction?["originalTransactionId"] as? String
    }

    private static func jwsPayload(_ jws: String) -> [String: Any]? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])) else { return nil }
        return object(Data(bytes))
    }

    private static func object(_ data: Data) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}
