import AppStoreTestSupport
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import asnp

@Suite("asnp dev: the whole pipeline from one command")
struct DevCommandTests {
    @Test(
        "Starts, says ready, stores every fixture body posted to its ingress, stops on SIGTERM; a restart keeps the data"
    )
    func devRoundTrip() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-dev-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let httpPort = try LoopbackPort.free()
        let postgresPort = try LoopbackPort.free()
        let configFile = directory.appendingPathComponent("status.json")
        try Data(
            #"{"database": {"url": "postgres://postgres@127.0.0.1:\#(postgresPort)/asnp?sslmode=disable"}}"#.utf8
        ).write(to: configFile)
        func startDev() async throws -> (Process, String) {
            let dev = Process()
            dev.executableURL = ASNPProcess.executable
            dev.arguments = [
                "dev", "--data-dir", directory.appendingPathComponent("data").path, "--http-port", String(httpPort),
                "--postgres-port", String(postgresPort), "--root-cert",
                Fixtures.directory.appendingPathComponent("test-root.der").path, "--bundle-id", Fixtures.bundleId,
                "--app-apple-id", String(Fixtures.appAppleId), "--log-level", "error",
            ]
            let output = Pipe()
            dev.standardOutput = output
            dev.standardError = FileHandle.nullDevice
            try dev.run()
            let banner = await Self.read(output, until: "\nready\n")
            return (dev, banner)
        }

        var (dev, banner) = try await startDev()
        defer { if dev.isRunning { dev.terminate() } }
        #expect(banner.contains("\nready\n"), "\(banner)")
        #expect(banner.contains("http://127.0.0.1:\(httpPort)/v2/notifications/sandbox"))
        #expect(banner.contains("schema version 2 (applied 2)"))

        let valid = Fixtures.v2Cases.filter { $0.expectedStatus == "OK" }
        for body in valid.map(\.body) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(httpPort)/v2/notifications/sandbox")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(response.status == .ok)
        }
        let expected = valid.count
        var stored = -1
        let deadline = ContinuousClock.now.advanced(by: .seconds(120))
        while stored != expected, ContinuousClock.now < deadline {
            let status = try await ASNPProcess.run(["status", "--config", configFile.path, "--json"])
            let counts = status.jsonLines.first?["counts"] as? [String: Any]
            stored = (counts?["notificationsByType"] as? [String: Int])?.values.reduce(0, +) ?? -1
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(stored == expected, "every posted body is stored")

        dev.terminate()
        await dev.exited()
        #expect(dev.terminationStatus == 0)

        // The same data directory again: nothing to migrate, the notifications are still there.
        (dev, banner) = try await startDev()
        #expect(banner.contains("schema version 2 (nothing to apply)"), "\(banner)")
        let again = try await ASNPProcess.run(["status", "--config", configFile.path, "--json"])
        let counts = again.jsonLines.first?["counts"] as? [String: Any]
        #expect((counts?["notificationsByType"] as? [String: Int])?.values.reduce(0, +) == expected)
        dev.terminate()
        await dev.exited()
        #expect(dev.terminationStatus == 0)
    }

    @Test("--demo: signed notifications through the ingress, duplicates dropped, the tampered body rejected, a summary")
    func demo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-demo-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let dev = Process()
        dev.executableURL = ASNPProcess.executable
        dev.arguments = [
            "dev", "--demo", "--demo-count", "60", "--data-dir", directory.appendingPathComponent("data").path,
            "--http-port", String(try LoopbackPort.free()), "--postgres-port", String(try LoopbackPort.free()),
            "--log-level", "error",
        ]
        let output = Pipe()
        dev.standardOutput = output
        dev.standardError = FileHandle.nullDevice
        try dev.run()
        defer { if dev.isRunning { dev.terminate() } }
        let text = await Self.read(output, until: "demo: look closer")
        #expect(text.contains("demo: posting 60 notifications, 6 duplicate retries and 1 tampered body"), "\(text)")
        #expect(text.contains("demo: 67 of 67 answered 200"))
        #expect(text.contains("demo: stored 60 notifications of 10 subscriptions"))
        #expect(text.contains("rejected 1 (VERIFICATION_FAILURE 1)"))
        #expect(text.contains("demo: subscriptions by latest notification: EXPIRED 10"))
        dev.terminate()
        await dev.exited()
        #expect(dev.terminationStatus == 0)
    }

    /// Reads `pipe` on a thread of its own (the read blocks) until `marker` appeared or the output ended.
    static func read(_ pipe: Pipe, until marker: String) async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            Thread {
                var text = ""
                while !text.contains(marker) {
                    let chunk = pipe.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                continuation.resume(returning: text)
            }.start()
        }
    }
}
