import AppStoreTestSupport
import Foundation
import Testing

/// `asnp verify` as operators and scripts use it: the built binary, its output contract and exit codes.
@Suite("asnp verify", .tags(.process))
struct VerifyCommandTests {
    static let fixtureApp = [
        "--root-cert", Fixtures.directory.appendingPathComponent("test-root.der").path,
        "--bundle-id", Fixtures.bundleId, "--app-apple-id", String(Fixtures.appAppleId), "--environment", "Sandbox",
        "--shared-secret", Fixtures.sharedSecret,
    ]

    @Test("the real Apple notification verifies with the built-in root: exit 0, the decoded fields printed")
    func realAppleNotification() async throws {
        let run = try await ASNPProcess.run([
            "verify", "--bundle-id", "com.loki-project.loki-messenger", "--environment", "Sandbox",
            Fixtures.directory.appendingPathComponent("apple-real-test-notification.json").path,
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(run.jsonLines.first)
        #expect(object["status"] as? String == "OK")
        #expect(object["notificationUUID"] as? String == "592751ef-c1b8-47fc-929e-d62dee66df4c")
        #expect(object["notificationType"] as? String == "TEST")
        #expect((object["signedDate"] as? NSNumber)?.int64Value == 1_757_035_472_686)
    }

    @Test("a PEM root works like the DER one, from standard input")
    func pemRootFromStandardInput() async throws {
        let run = try await ASNPProcess.run(
            [
                "verify", "--root-cert", Fixtures.appleDirectory.appendingPathComponent("AppleRootCA-G3.pem").path,
                "--bundle-id", "com.loki-project.loki-messenger", "--environment", "sandbox",
            ],
            standardInput: try Fixtures.data("apple-real-test-notification.json")
        )
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.jsonLines.first?["status"] as? String == "OK")
    }

    @Test("a rejected body: exit 1, the status and a reason")
    func rejected() async throws {
        let run = try await ASNPProcess.run(["verify"] + Self.fixtureApp, standardInput: Data("not json".utf8))
        #expect(run.status == 1)
        let object = try #require(run.jsonLines.first)
        #expect(object["status"] as? String == "MALFORMED_BODY")
        #expect((object["reason"] as? String)?.isEmpty == false)
    }

    @Test(
        "usage errors exit 2",
        arguments: [
            ["verify", "--environment", "Sandbox"],
            ["verify", "--bundle-id", "x", "--environment", "Moon"],
            ["verify", "--bundle-id", "x", "--environment", "Production"],
            ["verify", "--bundle-id", "x", "--environment", "Sandbox", "/nonexistent/body.json"],
            ["verify", "--bundle-id", "x", "--environment", "Sandbox", "--root-cert", "/nonexistent/root.der"],
            ["verify", "--bundle-id", "x", "--environment", "Sandbox", "--jsonl", "file.json"],
            ["no-such-command"],
        ]
    )
    func usageErrors(_ arguments: [String]) async throws {
        let run = try await ASNPProcess.run(arguments, standardInput: Data("{}".utf8))
        #expect(run.status == 2, "\(run.standardError)")
        #expect(!run.standardError.isEmpty)
    }

    @Test("--jsonl verifies every fixture in input order, echoing ids, and agrees with the labels")
    func jsonl() async throws {
        var input = Data()
        var expected: [(String, String)] = []
        for fixture in Fixtures.v2Cases + Fixtures.v1Cases {
            let line = try JSONSerialization.data(withJSONObject: ["id": fixture.id, "body": fixture.body])
            input.append(line)
            input.append(UInt8(ascii: "\n"))
            expected.append((fixture.id, fixture.expectedStatus))
        }
        input.append(Data("{\"id\": 7, \"nobody\": true}\n".utf8))
        expected.append(("7", "MALFORMED_BODY"))

        let run = try await ASNPProcess.run(["verify", "--jsonl"] + Self.fixtureApp, standardInput: input)
        #expect(run.status == 1, "hostile cases are in the input")
        let results = run.jsonLines
        #expect(results.count == expected.count)
        for (result, (id, status)) in zip(results, expected) {
            #expect("\(result["id"] ?? "")" == id)
            #expect(result["status"] as? String == status, "\(id): \(result["reason"] ?? "")")
        }
    }

    @Test("--jsonl exits 0 when every line verifies")
    func jsonlAllValid() async throws {
        let valid = Fixtures.v2Cases.filter { $0.kind == "valid" }
        var input = Data()
        for fixture in valid {
            input.append(try JSONSerialization.data(withJSONObject: ["id": fixture.id, "body": fixture.body]))
            input.append(UInt8(ascii: "\n"))
        }
        let run = try await ASNPProcess.run(
            ["verify", "--jsonl", "--concurrency", "3"] + Self.fixtureApp,
            standardInput: input
        )
        #expect(run.status == 0)
        #expect(run.jsonLines.map { $0["id"] as? String } == valid.map(\.id))
    }

    @Test("--jsonl skips blank lines, accepts CRLF and a last line without a line break")
    func jsonlLineHandling() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.kind == "valid" })
        let line = String(
            decoding: try JSONSerialization.data(withJSONObject: ["id": "a", "body": valid.body]),
            as: UTF8.self
        )
        let input = "\n   \n" + line + "\r\n\n" + line.replacingOccurrences(of: "\"a\"", with: "\"b\"")
        let run = try await ASNPProcess.run(["verify", "--jsonl"] + Self.fixtureApp, standardInput: Data(input.utf8))
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.jsonLines.map { $0["id"] as? String } == ["a", "b"])
    }

    @Test("--jsonl echoes any JSON id as the same value: strings, integers, fractions, booleans, objects")
    func idsEchoed() async throws {
        let body = try #require(Fixtures.v2Cases.first { $0.kind == "valid" }).body
        let ids: [Any] = ["x", 42, 1.5, true, ["nested": [1, 2]], NSNull()]
        var input = Data()
        for id in ids {
            input.append(try JSONSerialization.data(withJSONObject: ["id": id, "body": body]))
            input.append(UInt8(ascii: "\n"))
        }
        let run = try await ASNPProcess.run(["verify", "--jsonl"] + Self.fixtureApp, standardInput: input)
        #expect(run.status == 0, "\(run.standardError)")
        let echoed = run.jsonLines.map { $0["id"] }
        #expect(echoed.count == ids.count)
        for (sent, received) in zip(ids, echoed) {
            let sentJSON = try JSONSerialization.data(withJSONObject: sent, options: [.fragmentsAllowed, .sortedKeys])
            let receivedJSON = try JSONSerialization.data(
                withJSONObject: received ?? NSNull(),
                options: [.fragmentsAllowed, .sortedKeys]
            )
            #expect(sentJSON == receivedJSON)
        }
    }

    @Test("V1 shared secrets can come from a file, one a line, so they stay out of the process list")
    func sharedSecretFile() async throws {
        let v1 = try #require(Fixtures.v1Cases.first { $0.kind == "valid" })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-secrets-\(UUID().uuidString)")
        try Data("old-rotated-secret\n\n\(Fixtures.sharedSecret)\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let app = ["--bundle-id", Fixtures.bundleId, "--environment", "Sandbox"]

        let withFile = try await ASNPProcess.run(
            ["verify", "--shared-secret-file", file.path] + app,
            standardInput: Data(v1.body.utf8)
        )
        #expect(withFile.status == 0, "\(withFile.standardError)")
        #expect(withFile.jsonLines.first?["status"] as? String == "OK")

        let without = try await ASNPProcess.run(["verify"] + app, standardInput: Data(v1.body.utf8))
        #expect(without.status == 1)
        #expect(without.jsonLines.first?["status"] as? String == "INVALID_PASSWORD")
        #expect(!without.standardOutput.contains(Fixtures.sharedSecret))

        let missing = try await ASNPProcess.run(["verify", "--shared-secret-file", "/nonexistent/secrets"] + app)
        #expect(missing.status == 2)
    }
}
