import Foundation
import StoreTestSupport
import Testing

@Suite("asnp-bench e2e: the whole pipeline under stepped load")
struct BenchEndToEndCommandTests {
    @Test(
        """
        Two short steps through the broker, ingress and worker processes into a real PostgreSQL: a row per step, \
        PostgreSQL's CPU measured, every notification answered 200 stored and published as a decoded event
        """
    )
    func shortRun() async throws {
        let server = try await TestPostgresServer.shared()
        let result = try await ASNPProcess.runBench([
            "e2e", "--database-url", server.url(),
            "--rates", "50,100", "--step-seconds", "2", "--partitions", "8", "--connections", "4",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            lines.contains { $0.hasPrefix("asnp kafka-mock, asnp ingress, 2 asnp worker, PostgreSQL on ") },
            "PostgreSQL runs here, so its CPU is measured: \(lines)"
        )
        #expect(lines.contains { $0.hasPrefix("50 ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("100 ") }, "\(lines)")
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
        #expect(
            try await server.psql("postgres", "SELECT count(*) FROM pg_database WHERE datname LIKE 'asnp_bench_e2e_%'")
                == "0",
            "the scratch database is dropped"
        )
    }
}
