import CommandSupport
import Foundation
import Histogram
import Synchronization

/// `asnp-bench api`'s results: per rate, the API's lookup and the same query by SQL, and their ratios.
struct APIBenchReport {
    struct Row: Encodable {
        var rate: Int
        var api: OpenLoop.Result
        var sql: OpenLoop.Result
        /// CPU time of the `asnp api` process per answered request, in milliseconds.
        var apiCPUMillisecondsPerRequest: Double

        var p99Ratio: Double { sql.p99 > 0 ? api.p99 / sql.p99 : 0 }
        var rateRatio: Double { sql.perSecond > 0 ? api.perSecond / sql.perSecond : 0 }
    }

    var title: String
    var rows: [Row]

    func print(json: Bool) {
        if json {
            struct Output: Encodable {
                struct Row: Encodable {
                    var rate: Int
                    var api: OpenLoop.Result
                    var sql: OpenLoop.Result
                    var apiSustained: Bool
                    var sqlSustained: Bool
                    var p99RatioToSQL: Double
                    var rateRatioToSQL: Double
                    var apiCPUMillisecondsPerRequest: Double
                }
                var title: String
                var rows: [Row]
            }
            TextColumns.printJSON(
                Output(
                    title: title,
                    rows: rows.map {
                        .init(
                            rate: $0.rate,
                            api: $0.api,
                            sql: $0.sql,
                            apiSustained: $0.api.sustained,
                            sqlSustained: $0.sql.sustained,
                            p99RatioToSQL: $0.p99Ratio,
                            rateRatioToSQL: $0.rateRatio,
                            apiCPUMillisecondsPerRequest: $0.apiCPUMillisecondsPerRequest
                        )
                    }
                )
            )
            return
        }
        Swift.print(title)
        let widths = [8, 20, 10, 10, 20, 10, 10, 11, 10, 0]
        Swift.print(
            TextColumns.line(
                [
                    "rate/s", "API /s", "API p50", "API p99", "SQL /s", "SQL p50", "SQL p99", "p99 vs SQL",
                    "/s vs SQL", "API CPU/request",
                ],
                widths: widths
            )
        )
        func milliseconds(_ value: Double) -> String { String(format: "%.2f ms", value) }
        func rate(_ result: OpenLoop.Result) -> String {
            String(format: "%.0f", result.perSecond) + (result.sustained ? "" : " (not sustained)")
        }
        for row in rows {
            Swift.print(
                TextColumns.line(
                    [
                        "\(row.rate)", rate(row.api), milliseconds(row.api.p50), milliseconds(row.api.p99),
                        rate(row.sql), milliseconds(row.sql.p50), milliseconds(row.sql.p99),
                        String(format: "%.2fx", row.p99Ratio), String(format: "%.2fx", row.rateRatio),
                        milliseconds(row.apiCPUMillisecondsPerRequest),
                    ],
                    widths: widths
                )
            )
        }
    }
}

/// Latencies of answered requests, from when each was due, in microseconds; failures counted.
final class LatencyRecorder: Sendable {
    private let state = Mutex(
        (
            histogram: Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three),
            answered: 0,
            failed: 0
        )
    )

    func record(ok: Bool, since due: ContinuousClock.Instant) {
        let elapsed = due.duration(to: .now)
        let microseconds = UInt64(
            max(0, elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)
        )
        state.withLock { state in
            if ok {
                state.answered += 1
                _ = state.histogram.record(microseconds)
            } else {
                state.failed += 1
            }
        }
    }

    func summarize(into result: inout OpenLoop.Result) {
        state.withLock { state in
            result.answered = state.answered
            result.failed = state.failed
            result.p50 = Double(state.histogram.valueAtPercentile(50)) / 1000
            result.p99 = Double(state.histogram.valueAtPercentile(99)) / 1000
            result.maximum = Double(state.histogram.max) / 1000
        }
    }
}

/// Requests in flight, bounded.
final class InFlight: Sendable {
    private let count = Mutex(0)

    /// Takes a place unless `limit` are taken.
    func enter(limit: Int) -> Bool {
        count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() { count.withLock { $0 -= 1 } }
}
