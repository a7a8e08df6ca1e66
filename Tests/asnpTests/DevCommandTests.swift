import AppStoreModels
import AppStoreTestSupport
import AsyncHTTPClient
import ChildProcesses
import CommandSupport
import Foundation
import NIOCore
import NIOHTTP1
import NotificationSchema
import NotificationStore
import PipelineContract
import PostgresRuntime
import StoreTestSupport
import Testing

@testable import asnp

@Suite("asnp dev: the whole pipeline from one command", .tags(.process))
struct DevCommandTests {
    @Test(
        """
        Starts, says ready; every fixture body posted to its ingress is stored or rejected, the decoded topic (read \
        with kcat) has one event per notification; the scenario posted shuffled with retries leaves output topics \
        that reconcile with the tables; stops on SIGTERM; a restart keeps the data
        """
    )
    func devRoundTrip() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-dev-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let httpPort = try LoopbackPort.free()
        let postgresPort = try LoopbackPort.free()
        let apiPort = try LoopbackPort.free()
        let configFile = directory.appendingPathComponent("status.json")
        try Data(
            #"{"database": {"url": "postgres://postgres@127.0.0.1:\#(postgresPort)/asnp?sslmode=disable"}}"#.utf8
        ).write(to: configFile)
        func startDev() async throws -> (ChildProcess, String) {
            let output = try OutputPipe()
            let dev = try ChildProcess(
                executable: ASNPProcess.executable.path,
                arguments: [
                    "dev", "--data-dir", directory.appendingPathComponent("data").path, "--http-port",
                    String(httpPort), "--postgres-port", String(postgresPort), "--api-port", String(apiPort),
                    "--root-cert",
                    Fixtures.directory.appendingPathComponent("test-root.der").path, "--bundle-id", Fixtures.bundleId,
                    "--app-apple-id", String(Fixtures.appAppleId), "--shared-secret", Fixtures.sharedSecret,
                    "--log-level", "error",
                ],
                standardOutput: .pipe(output)
            )
            let banner = await output.read(until: "\nready\n")
            return (dev, banner)
        }

        var (dev, banner) = try await startDev()
        defer { if dev.isRunning { dev.terminate() } }
        #expect(banner.contains("\nready\n"), "\(banner)")
        #expect(banner.contains("http://127.0.0.1:\(httpPort)/v2/notifications/sandbox"))
        #expect(
            banner.contains(
                "schema version \(SchemaMigration.latestVersion) (applied \(SchemaMigration.latestVersion))"
            )
        )

        // Every fixture, V2 and V1, valid or not: a body that is not a JSON object gets 400 and is not kept; every
        // other one is answered 200 and ends stored or rejected.
        var rejectedExpected = 0
        for (version, fixture) in Fixtures.v2Cases.map({ (2, $0) }) + Fixtures.v1Cases.map({ (1, $0) }) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(httpPort)/v\(version)/notifications/sandbox")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: fixture.body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let isObject = (try? JSONSerialization.jsonObject(with: Data(fixture.body.utf8))) is [String: Any]
            #expect(response.status == (isObject ? .ok : .badRequest), "\(fixture.id)")
            if isObject, fixture.expectedStatus != "OK" { rejectedExpected += 1 }
        }
        let expected = (Fixtures.v2Cases + Fixtures.v1Cases).filter { $0.expectedStatus == "OK" }.count
        var (stored, rejected) = (-1, -1)
        _ = try await eventually(timeout: .seconds(120)) {
            let status = try await ASNPProcess.run(["status", "--config", configFile.path, "--json"])
            let counts = status.jsonLines.first?["counts"] as? [String: Any]
            stored = (counts?["notificationsByType"] as? [String: Int])?.values.reduce(0, +) ?? -1
            rejected = (counts?["rejectedByStatus"] as? [String: Int])?.values.reduce(0, +) ?? -1
            return (stored, rejected) == (expected, rejectedExpected)
        }
        #expect(stored == expected, "every valid body is stored")
        #expect(rejected == rejectedExpected, "every invalid body is stored as rejected")

        // kcat, an independent client, reads the decoded topic: one event per stored notification, by ce_id.
        // Events are published right after their batch committed, so the last ones may still be on their way.
        let bootstrap = try #require(banner.firstMatch(of: /in-process mock at ([0-9.:,]+),/)?.output.1)
        var eventIDs: [Substring] = []
        var events: [(key: Substring, headers: [Substring])] = []
        _ = try await eventually(timeout: .seconds(120)) {
            let decoded = try await runProgram(
                "kcat",
                ["-C", "-b", String(bootstrap), "-t", PipelineTopics.decoded, "-e", "-q", "-f", "%k %h\n"]
            )
            #expect(decoded.status == 0)
            events = String(decoding: decoded.output, as: UTF8.self).split(separator: "\n").map { line in
                let key = line.prefix { $0 != " " }
                return (key, line.dropFirst(key.count + 1).split(separator: ","))
            }
            eventIDs = events.compactMap { _, headers in
                headers.first { $0.hasPrefix("ce_id=") }.map { $0.dropFirst("ce_id=".count) }
            }
            return Set(eventIDs).count >= expected
        }
        #expect(Set(eventIDs).count == expected)
        // Every shape names its app and environment (summary, external purchase token and app data included), and
        // every event has a key: its subscription, or its own id when it has no transaction.
        let sources = events.compactMap { _, headers in headers.first { $0.hasPrefix("ce_source=") } }
        #expect(sources.count == events.count)
        #expect(sources.allSatisfy { !$0.contains("unknown") }, "\(Set(sources))")
        for (key, headers) in events {
            let id = headers.first { $0.hasPrefix("ce_id=") }?.dropFirst("ce_id=".count)
            let subject = headers.first { $0.hasPrefix("ce_subject=") }?.dropFirst("ce_subject=".count)
            #expect(key == (subject ?? id), "the key of \(headers)")
        }
        let v2Valid = Fixtures.v2Cases.filter { $0.expectedStatus == "OK" }
        let v2UUIDs = v2Valid.compactMap { fixture -> String? in
            if case .string(let uuid)? = fixture.expect["notificationUUID"] { return uuid.lowercased() }
            return nil
        }
        #expect(v2UUIDs.count == v2Valid.count)
        #expect(Set(v2UUIDs).isSubset(of: Set(eventIDs.map { $0.lowercased() })))

        // The lifecycle scenario, shuffled, and its first bodies posted again as Apple's retries would be: the
        // output topics, read with kcat, end one event per stored notification, one dead letter per rejected body,
        // and the state topic's last event per subscription equal to its row.
        let scenario = try String(
            contentsOf: Fixtures.directory.appendingPathComponent("scenario.jsonl"),
            encoding: .utf8
        )
        .split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["body"] as? String
        }
        #expect(!scenario.isEmpty)
        for body in scenario.shuffled() + scenario.prefix(10) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(httpPort)/v2/notifications/sandbox")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(response.status == .ok)
        }
        // The last bodies may still be on their way to the tables: the check holds once they are stored.
        var lastCheck: OutputReconciliation?
        _ = try await eventually(timeout: .seconds(120)) {
            lastCheck = try await OutputReconciliation.check(
                bootstrapServers: String(bootstrap),
                port: postgresPort,
                database: "asnp"
            )
            return lastCheck?.problems.isEmpty == true
        }
        let outputs = try #require(lastCheck)
        #expect(outputs.problems.isEmpty, "\(outputs.problems)")
        #expect(outputs.deadLetters == rejectedExpected)
        let before = try await ASNPProcess.run(["status", "--config", configFile.path, "--json"])
        let storedBefore =
            ((before.jsonLines.first?["counts"] as? [String: Any])?["notificationsByType"]
            as? [String: Int])?.values.reduce(0, +)
        #expect((storedBefore ?? 0) > expected)

        dev.terminate()
        await dev.exited()
        #expect(dev.terminationStatus == 0)

        // The same data directory again: nothing to migrate, the notifications are still there.
        (dev, banner) = try await startDev()
        #expect(banner.contains("schema version \(SchemaMigration.latestVersion) (nothing to apply)"), "\(banner)")
        let again = try await ASNPProcess.run(["status", "--config", configFile.path, "--json"])
        let counts = again.jsonLines.first?["counts"] as? [String: Any]
        #expect((counts?["notificationsByType"] as? [String: Int])?.values.reduce(0, +) == storedBefore)
        dev.terminate()
        await dev.exited()
        #expect(dev.terminationStatus == 0)
    }

    @Test("--demo: signed notifications through the ingress, duplicates dropped, the tampered body rejected, a summary")
    func demo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-demo-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = try OutputPipe()
        let dev = try ChildProcess(
            executable: ASNPProcess.executable.path,
            arguments: [
                "dev", "--demo", "--demo-count", "60", "--data-dir", directory.appendingPathComponent("data").path,
                "--http-port", String(try LoopbackPort.free()), "--postgres-port", String(try LoopbackPort.free()),
                "--api-port", String(try LoopbackPort.free()), "--log-level", "error",
            ],
            standardOutput: .pipe(output)
        )
        defer { if dev.isRunning { dev.terminate() } }
        let text = await output.read(until: "demo: ask it yourself")
        #expect(text.contains("demo: posting 60 notifications, 6 duplicate retries and 1 tampered body"), "\(text)")
        #expect(text.contains("demo: 67 of 67 answered 200"))
        #expect(text.contains("demo: stored 60 notifications of 10 subscriptions"))
        #expect(text.contains("rejected 1 (VERIFICATION_FAILURE 1)"))
        #expect(text.contains("demo: subscriptions by latest notification: EXPIRED 10"))
        // The read API, asked as an app backend would: every demo subscription ends expired.
        #expect(
            text.contains("demo: the read API answered 200 for subscription 2000000000: has_access false"),
            "\(text)"
        )
        dev.terminate()
        await dev.exited()
        #expect(dev.terminationStatus == 0)
    }
}
