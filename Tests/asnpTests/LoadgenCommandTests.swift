import AppStoreSigning
import AppStoreTestSupport
import Foundation
import StoreTestSupport
import Testing

@testable import asnp

@Suite("asnp-bench loadgen: realistic signed load against the real pipeline", .tags(.process))
struct LoadgenCommandTests {
    @Test(
        """
        Bodies written with duplicates, swaps, V1 bodies and tampered copies; posted to asnp dev, every one answered \
        200, each notification stored once and each tampered body rejected
        """
    )
    func againstDev() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (root, bodiesFile) = try await Self.writeBodies(
            [
                "--count", "120", "--duplicates", "0.1", "--out-of-order", "0.2", "--hostile", "0.02", "--v1-share",
                "0.25",
            ],
            in: directory
        )
        let lines = try String(contentsOfFile: bodiesFile, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 120 + 12 + 2)
        #expect(Set(lines).count == 120 + 2, "duplicates are copies; tampered bodies are new")
        #expect(FileManager.default.fileExists(atPath: root))
        #expect(Set(lines.filter { $0.hasPrefix(#"{"signedPayload""#) }).count == 90 + 2, "a quarter is V1")

        let dev = try await DevUnderTest.start(in: directory, root: root)
        defer { dev.stop() }
        let posted = try await ASNPProcess.runBench([
            "loadgen", "--bodies", bodiesFile, "--url", "http://127.0.0.1:\(dev.httpPort)/v2/notifications/sandbox",
            "--connections", "4", "--rate", "200", "--json",
        ])
        #expect(posted.status == 0, "\(posted.standardError)")
        let report = try #require(posted.jsonLines.first)
        #expect(report["sent"] as? Int == lines.count)
        #expect(report["ok"] as? Int == lines.count)
        #expect(report["errors"] as? Int == 0)
        #expect((report["p99Milliseconds"] as? Double ?? 0) > 0)
        // At 200 requests/s, 134 requests take about two thirds of a second at least.
        #expect((report["seconds"] as? Double ?? 0) >= 0.6)

        let configFile = directory.appendingPathComponent("data/dev.json").path
        var (stored, rejected) = (-1, -1)
        _ = try await eventually(timeout: .seconds(120)) {
            let status = try await ASNPProcess.run(["status", "--config", configFile, "--json"])
            let counts = status.jsonLines.first?["counts"] as? [String: Any]
            stored = (counts?["notificationsByType"] as? [String: Int])?.values.reduce(0, +) ?? -1
            rejected = (counts?["rejectedByStatus"] as? [String: Int])?.values.reduce(0, +) ?? -1
            return (stored, rejected) == (120, 2)
        }
        #expect(stored == 120)
        #expect(rejected == 2)
        let reconciliation = try await PipelineReconciliation.check(
            accepted: lines.map(String.init),
            port: dev.postgresPort,
            database: "asnp"
        )
        #expect(reconciliation.problems.isEmpty, "\(reconciliation.problems)")
        #expect(await dev.terminate() == 0)
    }

    @Test(
        """
        An Apple retry storm: every body posted 1 to 6 times, all shuffled, over 32 connections at full speed; each \
        notification stored once, each tampered delivery rejected, subscriptions as last-writer-wins computes them
        """
    )
    func retryStorm() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (root, bodiesFile) = try await Self.writeBodies(
            ["--count", "300", "--duplicates", "0", "--out-of-order", "0", "--hostile", "0.02", "--v1-share", "0.1"],
            in: directory
        )
        let bodies = try String(contentsOfFile: bodiesFile, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(bodies.count == 300 + 6)

        // Apple retries a notification it got no 2xx for, with the same body; here every one comes 1 to 6 times,
        // in no order at all.
        var generator = SeededGenerator(seed: 7)
        var storm = bodies.flatMap { body in Array(repeating: body, count: Int.random(in: 1...6, using: &generator)) }
        storm.shuffle(using: &generator)
        let stormFile = directory.appendingPathComponent("storm.jsonl").path
        try (storm.joined(separator: "\n") + "\n").write(toFile: stormFile, atomically: true, encoding: .utf8)

        let dev = try await DevUnderTest.start(in: directory, root: root, workers: 2)
        defer { dev.stop() }
        let posted = try await ASNPProcess.runBench([
            "loadgen", "--bodies", stormFile, "--url", "http://127.0.0.1:\(dev.httpPort)/v2/notifications/sandbox",
            "--connections", "32", "--json",
        ])
        #expect(posted.status == 0, "\(posted.standardError)")
        let report = try #require(posted.jsonLines.first)
        #expect(report["sent"] as? Int == storm.count)
        #expect(report["ok"] as? Int == storm.count)

        var lastCheck: PipelineReconciliation?
        _ = try await eventually(timeout: .seconds(120)) {
            lastCheck = try await PipelineReconciliation.check(
                accepted: storm,
                port: dev.postgresPort,
                database: "asnp"
            )
            return lastCheck?.problems.isEmpty == true
        }
        let reconciliation = try #require(lastCheck)
        #expect(reconciliation.problems.isEmpty, "\(reconciliation.problems)")
        #expect(reconciliation.stored == 270, "the V2 notifications (a tenth of 300 is V1)")
        #expect(reconciliation.rejectedDeliveries >= 6, "each tampered body at least once")
        #expect(await dev.terminate() == 0)
    }

    private static func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-loadgen-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Runs `asnp-bench loadgen --write-bodies` with `arguments` (V1 bodies with the fixtures' secret): the root
    /// certificate's path and the bodies file's.
    private static func writeBodies(_ arguments: [String], in directory: URL) async throws -> (String, String) {
        let root = directory.appendingPathComponent("root.der").path
        let bodies = directory.appendingPathComponent("bodies.jsonl").path
        let written = try await ASNPProcess.runBench(
            ["loadgen"] + arguments + [
                "--shared-secret", Fixtures.sharedSecret, "--root-cert-out", root, "--write-bodies", bodies,
            ]
        )
        #expect(written.status == 0, "\(written.standardError)")
        return (root, bodies)
    }
}
