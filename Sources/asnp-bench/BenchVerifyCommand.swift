import AppStoreModels
import AppStoreSigning
import AppStoreVerification
import ArgumentParser
import Foundation
import KafkaClient
import LoadGeneration
import NotificationStore

/// `asnp-bench verify`: verify+decode throughput, side by side with Apple's Python library on the same inputs.
struct BenchVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Measure verify+decode throughput of realistic subscription notifications.",
        discussion: """
            Generates realistic V2 subscription notifications (3 JWS each: payload, transaction, renewal info) \
            signed by a fresh test PKI shaped like Apple's (P-384 root and intermediate, P-256 leaf), then \
            measures notifications/s on one core and on all cores, with the chain cache and without it. With \
            --baseline apple-python it runs Apple's app-store-server-library on the same bodies in the same run \
            and reports ratios (pip install app-store-server-library). The rows "+ store rows" also build each \
            verified notification's row as the worker's writer does (its facts, the packed body, the decoded \
            event's JSON; PreparedBatch, 16 at a time), without PostgreSQL: against the plain rows of the same \
            run, the worker's CPU beside verification that does not depend on Kafka or the database.
            """
    )

    enum Baseline: String, ExpressibleByArgument, CaseIterable {
        case applePython = "apple-python"
        case none
    }

    @Option(help: "How many distinct notifications to generate.")
    var count = 2_000

    @Option(help: "How many distinct signing chains the notifications use (Apple uses one at a time).")
    var chains = 1

    @Option(help: "Seconds to run each measurement.")
    var seconds = 5.0

    @Option(help: "The baseline to run on the same inputs: apple-python or none.")
    var baseline: Baseline = .applePython

    @Option(help: "Apple's Python library benchmark script.")
    var pythonScript = "Benchmarks/python/apple_verify_bench.py"

    @Option(help: "The Python interpreter with app-store-server-library installed.")
    var python = "python3"

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    func validate() throws {
        guard count > 0, chains > 0, seconds > 0 else {
            throw ValidationError("--count, --chains and --seconds must be positive")
        }
    }

    func run() async throws {
        let workload = try VerifyWorkload(count: count, chains: chains)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let cached = try workload.verifier(cacheCapacity: 64)
        let uncached = try workload.verifier(cacheCapacity: 0)
        var rows: [BenchmarkRow] = []
        rows.append(try await measure("asnp, chain cache", cores: 1, verifier: cached, bodies: workload.bodies))
        rows.append(try await measure("asnp, chain cache", cores: cores, verifier: cached, bodies: workload.bodies))
        rows.append(try await measure("asnp, no cache", cores: 1, verifier: uncached, bodies: workload.bodies))
        rows.append(
            try await measure(
                "asnp, chain cache, + store rows",
                cores: 1,
                verifier: cached,
                bodies: workload.bodies,
                preparingRows: true
            )
        )
        rows.append(
            try await measure(
                "asnp, chain cache, + store rows",
                cores: cores,
                verifier: cached,
                bodies: workload.bodies,
                preparingRows: true
            )
        )

        if baseline == .applePython {
            rows.append(try runApplePython(workload: workload))
        }
        let reference = rows.first(where: { $0.implementation.hasPrefix("apple") }) ?? rows[0]
        BenchmarkReport(
            title:
                "verify+decode, \(count) subscription notifications (3 JWS each), \(chains) chain(s), \(cores) cores",
            rows: rows,
            reference: reference
        ).print(json: json)
    }

    /// Notifications verified per second on `cores` tasks; with `preparingRows`, each batch of 16 verified ones is
    /// also prepared for the store (``PreparedBatch``) as the worker's writer prepares it.
    private func measure(
        _ name: String,
        cores: Int,
        verifier: NotificationVerifier,
        bodies: [Data],
        preparingRows: Bool = false
    ) async throws -> BenchmarkRow {
        // Every body must verify, or the figure would measure the rejection path.
        for body in bodies {
            let result = await verifier.verify(body: body)
            guard case .verified = result else {
                throw BenchFailure("a generated notification did not verify: \(result.status)")
            }
        }
        let start = ContinuousClock.now
        let deadline = start + .seconds(seconds)
        let total = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<cores {
                group.addTask {
                    var done = 0
                    var index = worker
                    var batch = NotificationBatch()
                    while ContinuousClock.now < deadline {
                        // A batch between clock reads keeps timing overhead out of the figure.
                        for _ in 0..<16 {
                            let body = bodies[index % bodies.count]
                            let result = await verifier.verify(body: body)
                            if preparingRows, case .verified(let notification) = result {
                                batch.entries.append(Self.entry(body: body, notification, offset: done))
                            }
                            index += cores
                            done += 1
                        }
                        if preparingRows {
                            // The rows are what the worker's writer sends; they must not be optimised away.
                            let prepared = PreparedBatch(batch)
                            precondition(prepared.notifications.count == batch.entries.count, "a row was not built")
                            batch.entries.removeAll(keepingCapacity: true)
                        }
                    }
                    return done
                }
            }
            return await group.reduce(0, +)
        }
        return BenchmarkRow(
            implementation: name,
            cores: cores,
            notifications: total,
            seconds: (ContinuousClock.now - start).seconds
        )
    }

    /// A verified notification as the worker hands it to the store: its body, as consumed, and its verdict.
    private static func entry(body: Data, _ notification: DecodedNotification, offset: Int) -> NotificationBatch.Entry {
        let raw = RawNotification(
            body: Array(body),
            key: nil,
            headers: ["asnp-version": "2"],
            receivedAt: Date(),
            source: KafkaTopicPartitionOffset(topic: "bench", partition: 0, offset: Int64(offset))
        )
        return NotificationBatch.Entry(raw: raw, verdict: .verified(notification))
    }

    private func runApplePython(workload: VerifyWorkload) throws -> BenchmarkRow {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var arguments = [pythonScript]
        for (index, root) in workload.rootDERs.enumerated() {
            let path = directory.appendingPathComponent("root-\(index).der")
            try Data(root).write(to: path)
            arguments += ["--root", path.path]
        }
        let input = directory.appendingPathComponent("bodies.jsonl")
        try workload.writeJSONLines(to: input)
        arguments += [
            "--bundle-id", VerifyWorkload.bundleId, "--environment", "Sandbox", "--input", input.path,
            "--seconds", String(seconds), "--json",
        ]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct PythonResult: Decodable {
            var version: String
            var notifications: Int
            var seconds: Double
            var rejected: Int
        }
        guard process.terminationStatus == 0,
            let line = output.split(separator: UInt8(ascii: "\n")).last,
            let result = try? JSONDecoder().decode(PythonResult.self, from: Data(line))
        else {
            throw BenchFailure(
                "Apple's Python library did not run (exit \(process.terminationStatus)); install it with "
                    + "`pip install app-store-server-library`, or pass --baseline none"
            )
        }
        return BenchmarkRow(
            implementation: "apple-python \(result.version)",
            cores: 1,
            notifications: result.notifications,
            seconds: result.seconds
        )
    }
}
