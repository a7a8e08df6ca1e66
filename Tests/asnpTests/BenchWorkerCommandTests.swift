import AppStoreTestSupport
import Foundation
import StoreTestSupport
import Testing

@Suite("asnp-bench worker: a worker process from the mock cluster into PostgreSQL", .tags(.process))
struct BenchWorkerCommandTests {
    @Test(
        """
        One raw partition and a window wider than the run: more bodies than the mock keeps of a partition are fed \
        only as the worker commits them, so every one is stored (none deleted by the mock before it was read)
        """
    )
    func busiestPartitionStaysWithinTheMock() async throws {
        let server = try await TestPostgresServer.shared()
        // 1,200 bodies in one partition pass the mock's ~5 MB (each holds three JWS with their certificate chains);
        // a window of 10,000 alone would let the producer write them all at once (390 of 1,200 were stored then).
        let result = try await ASNPProcess.runBench([
            "worker", "--database-url", server.url(),
            "--count", "1200", "--partitions", "1", "--window", "10000", "--batch-size", "200",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardError.contains("messages.lost"), "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("asnp worker to PostgreSQL") }, "\(lines)")
        #expect(
            try await server.psql(
                "postgres",
                "SELECT count(*) FROM pg_database WHERE datname LIKE 'asnp_bench_worker_%'"
            ) == "0",
            "the scratch database is dropped"
        )
    }
}
