import AppStoreTestSupport
import Foundation
import LoadGeneration
import StoreTestSupport
import Testing

@Suite("asnp-bench e2e: the whole pipeline under stepped load", .tags(.process))
struct BenchEndToEndCommandTests {
    @Test(
        """
        Two short steps through the broker, ingress and worker processes into a real PostgreSQL: a row per step, \
        PostgreSQL's CPU measured, every notification answered 200 stored and published as a decoded event; a third \
        step whose backlog could outgrow what the mock keeps is not run
        """
    )
    func shortRun() async throws {
        let server = try await TestPostgresServer.shared()
        let csv = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: csv) }
        let result = try await ASNPProcess.runBench([
            "e2e", "--database-url", server.url(),
            "--rates", "50,100,1500", "--step-seconds", "2", "--partitions", "8", "--connections", "4",
            "--csv", csv.path,
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasPrefix("asnp kafka-mock, asnp ingress, 2 asnp worker, PostgreSQL on ")
                    && $0.hasSuffix("; 8 raw partitions, 3 brokers")
            },
            "PostgreSQL runs here, so its CPU is measured; the mock has a production cluster's three brokers: \(lines)"
        )
        #expect(lines.contains { $0.hasPrefix("50 ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("100 ") }, "\(lines)")
        // 1,500/s for 2 s could leave more than the ~1,500 bodies 8 partitions of the mock keep safely (a debug
        // pipeline stores far less than 1,500/s): not run. Every step's bodies are signed and verified for the
        // baseline before the steps, so the step not run is kept small.
        #expect(!lines.contains { $0.hasPrefix("1500 ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("steps from 1500/s not run: a backlog of ") }, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("baseline (asnp verify --jsonl, all cores, same run): ")
                    && $0.contains("/s before the steps, ") && $0.contains("/s after)")
            },
            "the baseline is measured in the same run, before the steps and after: \(lines)"
        )
        // 500 to warm up, 100 and 200 in the steps, some of them duplicates of earlier ones.
        let summary = try #require(lines.first { $0.hasPrefix("answered 200: ") })
        #expect(summary.hasSuffix("; lost: 0"), "\(summary)")
        #expect(
            lines.contains { $0.hasPrefix("output events not acknowledged, kept and sent again: ") },
            "the workers' metrics are read: \(lines)"
        )
        // "decoded events published: N, for M notifications stored": an event for every stored notification.
        let events = try #require(lines.last { $0.hasPrefix("decoded events published: ") })
        let counts = events.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(counts.count == 2 && counts[0] >= counts[1] && counts[1] > 500, "\(events)")
        #expect(lines.first?.isEmpty == false && lines.contains { $0.contains("events/s") && $0.contains("lag") })
        // The raw topic's bytes a notification, from the ingress's metrics: uncompressed by default, so at least a
        // body's (several KB) in a step whose writes the producer reported (every second here).
        let rows = try String(contentsOf: csv, encoding: .utf8).split(separator: "\n").map { $0.split(separator: ",") }
        let column = try #require(rows.first?.firstIndex(of: "raw_bytes_per_notification"))
        let rawBytes = rows.dropFirst().compactMap { Double($0[column]) }
        #expect(rawBytes.contains { $0 > 2_000 }, "\(rows)")
        #expect(
            try await server.psql("postgres", "SELECT count(*) FROM pg_database WHERE datname LIKE 'asnp_bench_e2e_%'")
                == "0",
            "the scratch database is dropped"
        )
    }

    @Test("A step is not run when the backlog it could leave is past what the mock keeps: bodies would be deleted")
    func backlogRisk() throws {
        // Kept up: the backlog stays.
        #expect(
            EndToEndStep.backlogRisk(
                backlog: 2_000,
                stored: 2_400,
                newShare: 0.95,
                next: 2_500,
                stepSeconds: 20,
                limit: 10_000
            ) == nil
        )
        // Behind by 540/s (2,750 × 0.96 − 2,100) for 20 s on top of 1,000: 11,800, past 10,000.
        let reason = try #require(
            EndToEndStep.backlogRisk(
                backlog: 1_000,
                stored: 2_100,
                newShare: 0.96,
                next: 2_750,
                stepSeconds: 20,
                limit: 10_000
            )
        )
        #expect(
            reason.hasPrefix("a backlog of 1000 at 2100 stored/s could grow to 11800, past the 10000 "),
            "\(reason)"
        )
        // A backlog past the limit already: not run even at a rate the workers keep up with.
        #expect(
            EndToEndStep.backlogRisk(
                backlog: 12_000,
                stored: 2_400,
                newShare: 0.95,
                next: 2_000,
                stepSeconds: 20,
                limit: 10_000
            ) != nil
        )
    }

    @Test("Baselines far apart are called out: a ratio to them means nothing")
    func baselinesApart() {
        let apart = EndToEndStep.summary([], baselines: (before: 6_464, after: 2_982), cores: 2)
        #expect(apart.contains("; the baselines differ by 117%: the machine's speed changed"), "\(apart)")
        let close = EndToEndStep.summary([], baselines: (before: 6_464, after: 6_073), cores: 2)
        #expect(!close.contains("differ"), "\(close)")
    }

    @Test(
        """
        The summary names the highest sustained step and what each process spent per notification stored in it, in \
        verifications (the baseline's CPU per notification: the cores over its rate)
        """
    )
    func sustainedStepInVerifications() {
        func step(offered: Double, stored: Double, p99: Double, cpu: EndToEndStep.CPU) -> EndToEndStep {
            EndToEndStep(
                offered: offered,
                posted: offered,
                new: offered,
                ok: 0,
                notOK: 0,
                p50: 1,
                p99: p99,
                stored: stored,
                published: stored,
                backlog: 0,
                rawTopic: EndToEndStep.RawTopic(batches: offered / 2, messages: offered, bytes: offered * 7_500),
                cpu: cpu,
                memory: EndToEndStep.Memory(ingress: 0, worker: 0, mockBroker: 0)
            )
        }
        // 1,000/s stored with the baseline at 4,000/s on 2 cores: one verification is 0.5 ms of CPU, and a core's
        // 0.3 over 1,000 notifications a second is 0.3 ms each, 0.6 of one.
        let sustained = step(
            offered: 1_000,
            stored: 1_000,
            p99: 20,
            cpu: .init(ingress: 0.3, workers: 1.3, mockBroker: 0.1, postgres: 0.25, loadGenerator: 0.1)
        )
        // Stored more, but at p99 80 ms: not sustained.
        let tooSlow = step(
            offered: 1_500,
            stored: 1_400,
            p99: 80,
            cpu: .init(ingress: 0.4, workers: 1.5, mockBroker: 0.1, postgres: 0.3, loadGenerator: 0.1)
        )
        let summary = EndToEndStep.summary(
            [sustained, tooSlow],
            baselines: (before: 3_900, after: 4_100),
            cores: 2
        )
        #expect(
            summary.hasSuffix(
                "; sustained: 1000/s offered, 1000/s stored, p99 20.0 ms: 0.25× the baseline; CPU per notification "
                    + "stored there, in verifications: ingress 0.60, workers 2.60, PostgreSQL 0.50; the raw topic there: 7500 "
                    + "bytes a notification, 2.00 notifications a batch"
            ),
            "\(summary)"
        )
        // PostgreSQL elsewhere: its CPU is not measured, nor named. No raw-topic report in the step: nothing said.
        var elsewhere = sustained
        elsewhere.cpu.postgres = nil
        elsewhere.rawTopic = EndToEndStep.RawTopic(batches: 0, messages: 0, bytes: 0)
        let withoutPostgres = EndToEndStep.summary(
            [elsewhere],
            baselines: (before: 4_000, after: 4_000),
            cores: 2
        )
        #expect(withoutPostgres.hasSuffix("in verifications: ingress 0.60, workers 2.60"), "\(withoutPostgres)")
    }
}
