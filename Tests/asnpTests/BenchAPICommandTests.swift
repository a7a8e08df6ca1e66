import AppStoreTestSupport
import Foundation
import StoreTestSupport
import Testing

@Suite("asnp-bench api: the read API's lookup against the same query by SQL", .tags(.process))
struct BenchAPICommandTests {
    @Test("a short run answers every lookup both ways, reports both with their ratio, and drops its database")
    func shortRun() async throws {
        let server = try await TestPostgresServer.shared()
        let result = try await ASNPProcess.runBench([
            "api", "--database-url", server.url(), "--subscriptions", "200", "--rates", "20", "--seconds", "1",
            "--json",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        )
        let row = try #require((report["rows"] as? [[String: Any]])?.first)
        let api = try #require(row["api"] as? [String: Any])
        let sql = try #require(row["sql"] as? [String: Any])
        #expect(api["due"] as? Int == 20)
        #expect(api["answered"] as? Int == 20, "every lookup through the API found its subscription")
        #expect(sql["answered"] as? Int == 20, "every lookup by SQL found its subscription")
        #expect((row["p99RatioToSQL"] as? Double ?? 0) > 0)
        #expect(
            try await server.psql(
                "postgres",
                "SELECT count(*) FROM pg_database WHERE datname LIKE 'asnp_bench_api_%'"
            ) == "0",
            "the scratch database is dropped"
        )
    }
}
