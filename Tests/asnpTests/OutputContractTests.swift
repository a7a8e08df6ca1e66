import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import asnp

/// The output topics checked against Docs/contract by an independent validator (Python's `jsonschema`), with the
/// events read back by `asnp tail` as a downstream developer would.
@Suite(
    "The output contract: what asnp dev publishes, read with asnp tail, validates against Docs/contract",
    .tags(.process)
)
struct OutputContractTests {
    static let validator = Fixtures.packageRoot.appendingPathComponent("Tests/ContractValidation/validate_events.py")
    static let contract = Fixtures.packageRoot.appendingPathComponent("Docs/contract")

    /// A notification for the dev app carrying fields no version of the models knows, in the payload, in `data`
    /// and in the signed transaction; with `status` and renewal info as given.
    static func body(
        uuid: UUID,
        signer: JWSSigner,
        originalTransactionId: String = "9000000001",
        status: Int = 1,
        gracePeriodExpiresDate: Int64? = nil
    ) throws -> String {
        let transaction = try signer.sign(
            payloadJSON: Data(
                #"{"bundleId":"\#(Fixtures.bundleId)","environment":"Sandbox","originalTransactionId":"\#(originalTransactionId)","transactionId":"9000000002","productId":"com.example.notes.pro","signedDate":1780272000000,"expiresDate":1782864000000,"price":4990,"currency":"EUR","offerType":1,"futureTransactionField":{"deep":[1,2.5,"é"]}}"#
                    .utf8
            )
        )
        let renewal = try signer.sign(
            payloadJSON: Data(
                #"{"environment":"Sandbox","originalTransactionId":"\#(originalTransactionId)","autoRenewProductId":"com.example.notes.pro.yearly","autoRenewStatus":1,"signedDate":1780272000000\#(gracePeriodExpiresDate.map { ",\"gracePeriodExpiresDate\":\($0)" } ?? "")}"#
                    .utf8
            )
        )
        let payload = #"""
            {"notificationType":"DID_RENEW","notificationUUID":"\#(uuid.uuidString.lowercased())","version":"2.0","signedDate":1780272000000,"futureTopLevel":true,"data":{"bundleId":"\#(Fixtures.bundleId)","environment":"Sandbox","status":\#(status),"signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)","futureDataField":"x"}}
            """#
        return try NotificationSigner.envelope(try signer.sign(payloadJSON: Data(payload.utf8)))
    }

    /// The payload of a compact JWS, decoded here, apart from the package's code.
    static func jwsPayload(_ compact: Any?) -> [String: Any]? {
        guard let compact = compact as? String else { return nil }
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    /// What Apple's fields of a signed V2 body say about access, by Docs/entitlement.md's table, computed here: a
    /// subscription's state after a notification when that notification is the only one of its subscription, or
    /// the newest of a lifecycle whose renewals were all delivered.
    static func expectedEntitlement(body: String) -> (status: Int?, entitled: Bool?, until: Int64?)? {
        guard let envelope = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let payload = jwsPayload(envelope["signedPayload"])
        else { return nil }
        let data = payload["data"] as? [String: Any]
        let status = data?["status"] as? Int
        let transaction = jwsPayload(data?["signedTransactionInfo"])
        let renewal = jwsPayload(data?["signedRenewalInfo"])
        func date(_ object: [String: Any]?, _ name: String) -> Int64? { (object?[name] as? NSNumber)?.int64Value }
        let revoked = transaction?["revocationDate"] != nil
        switch transaction?["type"] as? String {
        case "Consumable": return (status, false, nil)
        case "Non-Consumable": return (status, !revoked, nil)
        case "Non-Renewing Subscription": return (status, revoked ? false : nil, nil)
        default: break
        }
        switch status {
        case 1:
            let until = [date(transaction, "expiresDate"), date(renewal, "renewalDate")].compactMap { $0 }.max()
            return (1, until == nil ? nil : true, until)
        case 4:
            let until = date(renewal, "gracePeriodExpiresDate")
            return (4, until == nil ? nil : true, until)
        case 2, 3, 5: return (status, false, nil)
        case nil where transaction?["type"] as? String == "Auto-Renewable Subscription":
            let retrying = renewal?["isInBillingRetryPeriod"] as? Bool == true
            let until =
                revoked ? nil : retrying ? date(renewal, "gracePeriodExpiresDate") : date(transaction, "expiresDate")
            return (nil, until != nil, until)
        default: return (status, nil, nil)
        }
    }

    /// A `to_jsonb` timestamp in milliseconds since 1970.
    static func milliseconds(_ timestamp: Any?) -> Int64? {
        guard let text = timestamp as? String else { return nil }
        var style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        style.timeZone = .gmt
        let date =
            (try? Date(text, strategy: style))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle()))
        return date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }

    static func post(_ body: String, version: Int, port: Int) async throws -> HTTPResponseStatus {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v\(version)/notifications/sandbox")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: body))
        return try await HTTPClient.shared.execute(request, timeout: .seconds(10)).status
    }

    /// `asnp tail` lines, parsed.
    static func tail(_ arguments: [String], settings: String) async throws -> (lines: [String], events: [[String: Any]])
    {
        let run = try await ASNPProcess.run(["tail"] + arguments + ["--config", settings])
        #expect(run.status == 0, "asnp tail \(arguments): \(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        return (lines, run.jsonLines)
    }

    @Test(
        """
        Every fixture (all V2 shapes, V1, hostile), the lifecycle scenario and a notification with unknown fields: \
        every event validates against the schema its ce_dataschema names, no source says unknown, no V2 row lacks \
        its app or environment, the unknown fields are in the event, each carries its notification's trace; tail \
        filters, limits and follows
        """
    )
    func contractThroughDev() async throws {
        // Traced, as a deployment with tracing on is: every event then carries its notification's trace context.
        let collector = OTLPTestCollector()
        try await collector.serve { endpoint in try await contractThroughDev(tracingEndpoint: endpoint) }
        #expect(!collector.spans.isEmpty, "asnp dev exported its spans: \(collector.unreadableExports)")
    }

    private func contractThroughDev(tracingEndpoint: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-contract-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try TestPKI()
        let pkiRoot = directory.appendingPathComponent("pki-root.der")
        try Data(try pki.rootDER()).write(to: pkiRoot)
        let signer = try JWSSigner(pki: pki)
        let dev = try await DevUnderTest.start(
            in: directory,
            roots: [Fixtures.directory.appendingPathComponent("test-root.der").path, pkiRoot.path],
            tracingEndpoint: tracingEndpoint
        )
        defer { dev.stop() }

        var notifications = Set<String>()
        var rejected = 0
        for (version, fixture) in Fixtures.v2Cases.map({ (2, $0) }) + Fixtures.v1Cases.map({ (1, $0) }) {
            let status = try await Self.post(fixture.body, version: version, port: dev.httpPort)
            guard status == .ok else { continue }
            if fixture.expectedStatus == "OK" {
                notifications.insert(fixture.body)
            } else {
                rejected += 1
            }
        }
        let scenario = try String(
            contentsOf: Fixtures.directory.appendingPathComponent("scenario.jsonl"),
            encoding: .utf8
        )
        .split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["body"] as? String
        }
        for body in scenario {
            #expect(try await Self.post(body, version: 2, port: dev.httpPort) == .ok)
        }
        let unknownUUID = UUID()
        var signedHere = [unknownUUID.uuidString.lowercased(): try Self.body(uuid: unknownUUID, signer: signer)]
        // Every status Apple documents, each a subscription of its own; a grace period with its end.
        for status in 2...5 {
            let uuid = UUID()
            signedHere[uuid.uuidString.lowercased()] = try Self.body(
                uuid: uuid,
                signer: signer,
                originalTransactionId: "900000001\(status)",
                status: status,
                gracePeriodExpiresDate: status == 4 ? 1_781_481_600_123 : nil
            )
        }
        for body in signedHere.values {
            #expect(try await Self.post(body, version: 2, port: dev.httpPort) == .ok)
        }
        // Scenario retries repeat bodies: one notification each.
        let stored = notifications.count + Set(scenario).count + signedHere.count

        // Events are published right after their batch committed: read until all are there.
        var decoded: (lines: [String], events: [[String: Any]]) = ([], [])
        var letters = decoded
        _ = try await eventually(timeout: .seconds(120)) {
            decoded = try await Self.tail(["decoded"], settings: dev.settingsFile)
            letters = try await Self.tail(["dead-letters"], settings: dev.settingsFile)
            return decoded.lines.count >= stored && letters.lines.count >= rejected
        }
        #expect(decoded.lines.count == stored)
        #expect(letters.lines.count == rejected)
        let states = try await Self.tail(["state"], settings: dev.settingsFile)
        #expect(!states.lines.isEmpty)

        // The independent validator: the contract files themselves, then every event read back.
        let events = directory.appendingPathComponent("events.jsonl")
        try Data((decoded.lines + states.lines + letters.lines).joined(separator: "\n").utf8).write(to: events)
        let contract = try await runProgram(
            "python3",
            [Self.validator.path, "--contract", Self.contract.path, "asyncapi"]
        )
        #expect(contract.status == 0, "\(String(decoding: contract.output, as: UTF8.self))")
        let validation = try await runProgram(
            "python3",
            [Self.validator.path, "--contract", Self.contract.path, "events", events.path]
        )
        let report = String(decoding: validation.output, as: UTF8.self)
        #expect(validation.status == 0, "\(report)")
        for schema in ["decoded-v2/1", "decoded-v1/1", "subscription-state/1", "dead-letter/1"] {
            #expect(report.contains(schema), "the validator saw \(schema) events: \(report)")
        }

        // Every event is in its notification's trace, under both names (the validator checks they agree).
        for event in decoded.events + states.events + letters.events {
            let headers = event["headers"] as? [String: Any]
            #expect(headers?["traceparent"] is String && headers?["ce_traceparent"] is String, "\(event)")
        }

        // Every event says where it comes from; every V2 row names its app and environment.
        let headers = (decoded.events + states.events).compactMap { $0["headers"] as? [String: Any] }
        #expect(headers.count == decoded.events.count + states.events.count)
        #expect(headers.allSatisfy { ($0["ce_source"] as? String)?.contains("unknown") == false })
        let incomplete = try await runProgram(
            "psql",
            [
                "-h", "127.0.0.1", "-p", String(dev.postgresPort), "-U", "postgres", "-d", "asnp", "-At", "-c",
                "SELECT count(*) FROM notifications WHERE version = 2 AND (environment IS NULL OR bundle_id IS NULL)",
            ]
        )
        #expect(
            String(decoding: incomplete.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "0"
        )

        // The fields no model knows are in the event, with Apple's names and values.
        let event = try #require(
            decoded.events.first {
                ($0["headers"] as? [String: Any])?["ce_id"] as? String == unknownUUID.uuidString.lowercased()
            }
        )
        let value = try #require(event["value"] as? [String: Any])
        let payload = try #require(value["payload"] as? [String: Any])
        #expect(payload["futureTopLevel"] as? Bool == true)
        #expect((payload["data"] as? [String: Any])?["futureDataField"] as? String == "x")
        let transaction = try #require(value["transactionInfo"] as? [String: Any])
        #expect((transaction["futureTransactionField"] as? [String: Any])?["deep"] as? [AnyHashable] == [1, 2.5, "é"])
        #expect(event["key"] as? String == "9000000001")

        // Entitlement: every state event (the scenario's, every fixture subscription's, every status) says what the
        // signed payload of the notification it shows says, computed here; the last per key is the table's row.
        var bodies = signedHere
        for fixture in Fixtures.v2Cases where fixture.expectedStatus == "OK" {
            if case .string(let uuid)? = fixture.expect["notificationUUID"] { bodies[uuid.lowercased()] = fixture.body }
        }
        for line in try String(contentsOf: Fixtures.directory.appendingPathComponent("scenario.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if let uuid = object?["uuid"] as? String, let body = object?["body"] as? String {
                bodies[uuid.lowercased()] = body
            }
        }
        var lastState: [String: [String: Any]] = [:]
        var statuses = Set<Int>()
        for event in states.events {
            let value = try #require(event["value"] as? [String: Any])
            let id = try #require((event["headers"] as? [String: Any])?["ce_id"] as? String)
            lastState[try #require(event["key"] as? String)] = value
            // A V1 notification's state (its UUID derived from the body, version 8) has no status to compare:
            // SubscriptionRulesTests holds V1 states to Docs/entitlement.md.
            if bodies[id] == nil, Array(id)[14] == "8", value["status"] is NSNull {
                #expect(value["product_type"] as? String == "Auto-Renewable Subscription", "\(id)")
                continue
            }
            let body = try #require(bodies[id], "the notification \(id) a state shows was posted here")
            let expected = try #require(Self.expectedEntitlement(body: body))
            #expect(value["status"] as? Int == expected.status, "\(id)")
            #expect(value["entitled"] as? Bool == expected.entitled, "\(id)")
            #expect(Self.milliseconds(value["entitled_until"]) == expected.until, "\(id)")
            if let status = expected.status { statuses.insert(status) }
        }
        #expect(statuses == [1, 2, 3, 4, 5])
        let grace = try #require(lastState["9000000014"])
        #expect(Self.milliseconds(grace["entitled_until"]) == 1_781_481_600_123)
        #expect(grace["auto_renew_product_id"] as? String == "com.example.notes.pro.yearly")
        #expect(
            grace["price"] as? Int == 4990 && grace["currency"] as? String == "EUR" && grace["offer_type"] as? Int == 1
        )
        let table = try await runProgram(
            "psql",
            [
                "-h", "127.0.0.1", "-p", String(dev.postgresPort), "-U", "postgres", "-d", "asnp", "-At", "-c",
                "SELECT original_transaction_id || '|' || coalesce(status::text, '') || '|' || "
                    + "coalesce(entitled::text, '') || '|' || "
                    + "coalesce((extract(epoch FROM entitled_until) * 1000)::bigint::text, '') FROM subscriptions",
            ]
        )
        let rows = String(decoding: table.output, as: UTF8.self).split(separator: "\n")
        #expect(rows.count == lastState.count)
        for row in rows {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            let state = try #require(lastState[cells[0]], "the state topic has \(cells[0])")
            #expect(cells[1] == ((state["status"] as? Int).map(String.init) ?? ""), "\(row)")
            #expect(cells[2] == ((state["entitled"] as? Bool).map(String.init) ?? ""), "\(row)")
            #expect(cells[3] == (Self.milliseconds(state["entitled_until"]).map(String.init) ?? ""), "\(row)")
        }

        // Filters: a key's events only, in order; a type by its last part; a limit.
        // The scenario's subscriptions are 5000000000 and up.
        let scenarioKey = try #require(
            decoded.events.compactMap { $0["key"] as? String }.first { $0.hasPrefix("5000") }
        )
        let keyed = try await Self.tail(["decoded", "--key", scenarioKey], settings: dev.settingsFile)
        #expect(!keyed.events.isEmpty && keyed.events.allSatisfy { $0["key"] as? String == scenarioKey })
        #expect(keyed.lines == decoded.lines.filter { $0.contains(#""key":"\#(scenarioKey)""#) })
        let renewals = try await Self.tail(["decoded", "--type", "DID_RENEW"], settings: dev.settingsFile)
        #expect(!renewals.events.isEmpty)
        #expect(
            renewals.events.allSatisfy {
                (($0["headers"] as? [String: Any])?["ce_type"] as? String)?.hasSuffix(".DID_RENEW") == true
            }
        )
        #expect(try await Self.tail(["decoded", "--limit", "1"], settings: dev.settingsFile).lines.count == 1)
        let refused = try await ASNPProcess.run(["tail", "decoded", "--from", "end", "--config", dev.settingsFile])
        #expect(refused.status == 2, "--from end without --follow is a usage error")

        // Following: every event so far, then one posted after it started.
        let newUUID = UUID()
        async let followed = ASNPProcess.run(
            ["tail", "decoded", "--follow", "--limit", String(stored + 1), "--config", dev.settingsFile]
        )
        try await Task.sleep(for: .milliseconds(500))
        #expect(
            try await Self.post(
                Self.body(uuid: newUUID, signer: signer),
                version: 2,
                port: dev.httpPort
            )
                == .ok
        )
        let follow = try await followed
        #expect(follow.status == 0)
        #expect(follow.jsonLines.count == stored + 1)
        #expect(
            (follow.jsonLines.last?["headers"] as? [String: Any])?["ce_id"] as? String
                == newUUID.uuidString.lowercased()
        )
        #expect(await dev.terminate() == 0)
    }
}
