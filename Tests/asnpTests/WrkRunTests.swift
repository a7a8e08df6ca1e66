import AppStoreTestSupport
import LoadGeneration
import Testing

@testable import asnp

@Suite("Reading wrk's report for asnp-bench ingress", .tags(.fast))
struct WrkRunTests {
    @Test("Rate, percentiles in every unit, non-2xx answers and socket errors")
    func parse() throws {
        let report = """
            Running 3s test @ http://127.0.0.1:8080/v2/notifications/sandbox
              2 threads and 32 connections
              Thread Stats   Avg      Stdev     Max   +/- Stdev
                Latency    17.00ms    5.00ms  50.00ms   70.00%
                Req/Sec   900.00    100.00     1.00k    70.00%
              Latency Distribution
                 50%  812.00us
                 75%   20.00ms
                 90%   25.00ms
                 99%    1.50s
              5430 requests in 3.00s, 400.00KB read
              Socket errors: connect 0, read 2, write 0, timeout 1
              Non-2xx or 3xx responses: 4
            Requests/sec:   1810.25
            Transfer/sec:    133.33KB
            """
        let run = try #require(WrkRun.parse(report))
        #expect(run.requestsPerSecond == 1810.25)
        #expect(abs(run.p50 - 0.000812) < 1e-9)
        #expect(run.p99 == 1.5)
        #expect(run.failures == 7)
        #expect(WrkRun.parse("unable to connect to 127.0.0.1:1 Connection refused") == nil)
        #expect(WrkRun.seconds("2.5m") == 150)
    }
}
