import AppStoreTestSupport
import Foundation
import Testing

@testable import asnp

@Suite("asnp loadgen: realistic signed load against the real pipeline")
struct LoadgenCommandTests {
    @Test(
        """
        Bodies written with duplicates, swaps, V1 bodies and tampered copies; posted to asnp dev, every one answered \
        200, each notification stored once and each tampered body rejected
        """
    )
    func againstDev() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-loadgen-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = directory.appendingPathComponent("root.der").path
        let bodiesFile = directory.appendingPathComponent("bodies.jsonl").path

        let written = try await ASNPProcess.run([
            "loadgen", "--count", "120", "--duplicates", "0.1", "--out-of-order", "0.2", "--hostile", "0.02",
            "--v1-share", "0.25", "--shared-secret", Fixtures.sharedSecret, "--root-cert-out", root, "--write-bodies",
            bodiesFile,
        ])
        #expect(written.status == 0, "\(written.standardError)")
        let lines = try String(contentsOfFile: bodiesFile, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 120 + 12 + 2)
        #expect(Set(lines).count == 120 + 2, "duplicates are copies; tampered bodies are new")
        #expect(FileManager.default.fileExists(atPath: root))
        #expect(Set(lines.filter { $0.hasPrefix(#"{"signedPayload""#) }).count == 90 + 2, "a quarter is V1")

        let httpPort = try LoopbackPort.free()
        let postgresPort = try LoopbackPort.free()
        let dev = Process()
        dev.executableURL = ASNPProcess.executable
        dev.arguments = [
            "dev", "--data-dir", directory.appendingPathComponent("data").path, "--http-port", String(httpPort),
            "--postgres-port", String(postgresPort), "--root-cert", root, "--shared-secret", Fixtures.sharedSecret,
            "--log-level", "error",
        ]
        let output = Pipe()
        dev.standardOutput = output
        dev.standardError = FileHandle.nullDevice
        try dev.run()
        defer { if dev.isRunning { dev.terminate() } }
        let banner = await DevCommandTests.read(output, until: "\nready\n")
        try #require(banner.contains("\nready\n"), "\(banner)")

        let posted = try await ASNPProcess.run([
            "loadgen", "--bodies", bodiesFile, "--url", "http://127.0.0.1:\(httpPort)/v2/notifications/sandbox",
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
        let deadline = ContinuousClock.now.advanced(by: .seconds(120))
        while (stored, rejected) != (120, 2), ContinuousClock.now < deadline {
            let status = try await ASNPProcess.run(["status", "--config", configFile, "--json"])
            let counts = status.jsonLines.first?["counts"] as? [String: Any]
            stored = (counts?["notificationsByType"] as? [String: Int])?.values.reduce(0, +) ?? -1
            rejected = (counts?["rejectedByStatus"] as? [String: Int])?.values.reduce(0, +) ?? -1
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(stored == 120)
        #expect(rejected == 2)
        dev.terminate()
        await dev.exited()
        #expect(dev.terminationStatus == 0)
    }
}
