import Foundation
import Histogram
import NIOCore
import NIOPosix
import Synchronization

/// Posts bodies to an ingress over a number of connections, as fast as possible or at a target rate, and measures
/// each request's latency. At a target rate, latency counts from when the request was due, not when it was sent,
/// so a stalled server is not hidden by requests waiting to go out (coordinated omission).
package struct LoadRun {
    package var url: String
    package var connections: Int
    /// Requests per second; nil: as fast as the connections allow.
    package var rate: Double?
    package var timeout: Duration = .seconds(30)
    /// Post a body not answered 200 (or not answered at all) again after this long, until it is, as Apple does;
    /// nil: once. Each attempt is a request of its own in the report, its latency counted from when it was sent.
    package var retryDelay: Duration?

    package init(
        url: String,
        connections: Int,
        rate: Double? = nil,
        timeout: Duration = .seconds(30),
        retryDelay: Duration? = nil
    ) {
        self.url = url
        self.connections = connections
        self.rate = rate
        self.timeout = timeout
        self.retryDelay = retryDelay
    }

    package struct Report: Encodable {
        /// Requests, retries included; bodies answered 200 (with retries, each body once).
        package var sent = 0
        package var ok = 0
        /// Requests that posted a body again after an answer other than 200.
        package var retries = 0
        /// Answers other than 200, by status code.
        package var statuses: [String: Int] = [:]
        /// Requests without an answer (connection failures, timeouts).
        package var errors = 0
        package var seconds = 0.0
        package var requestsPerSecond = 0.0
        package var p50Milliseconds = 0.0
        package var p99Milliseconds = 0.0
        package var p999Milliseconds = 0.0
        package var maxMilliseconds = 0.0
        /// The index of the body of each request answered other than 200 or not at all (for reconciling: such a
        /// post may still have reached the topic, its acknowledgement lost). Not in the JSON report.
        package var unanswered: [Int] = []

        private enum CodingKeys: String, CodingKey {
            case sent, ok, retries, statuses, errors, seconds, requestsPerSecond, p50Milliseconds, p99Milliseconds
            case p999Milliseconds, maxMilliseconds
        }
    }

    package func run(_ bodies: [String], progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) async throws
        -> Report
    {
        guard let components = URLComponents(string: url), components.scheme == "http", let host = components.host
        else {
            throw Failure(description: "the load generator posts to http:// URLs only, not \(url)")
        }
        let v2Path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let shared = Shared()
        let start = ContinuousClock.now
        let run = LoadLane.Run(
            host: host,
            port: components.port ?? 80,
            hostHeader: components.port.map { "\(host):\($0)" } ?? host,
            v2Path: v2Path,
            v1Path: v2Path.replacingOccurrences(of: "/v2/", with: "/v1/"),
            bodies: bodies,
            rate: rate,
            timeout: timeout,
            retryDelay: retryDelay,
            start: .now(),
            next: { shared.next.wrappingAdd(1, ordering: .relaxed).oldValue },
            answered: { status in
                let (sent, ok) = shared.counts.withLock { counts in
                    counts.sent += 1
                    counts.ok += status == 200 ? 1 : 0
                    return (counts.sent, counts.ok)
                }
                progress(sent, ok)
            }
        )
        let lanes = try await Self.withBatchEventLoops { group in
            var lanes: [LoadRun.Lane] = []
            for future in (0..<connections).map({ _ in LoadLane.start(run, on: group.next()) }) {
                lanes.append(try await future.get())
            }
            return lanes
        }
        let seconds = start.duration(to: .now).seconds

        var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
        var report = Report()
        for lane in lanes {
            for microseconds in lane.latencies { _ = histogram.record(microseconds) }
            report.sent += lane.latencies.count
            report.ok += lane.ok
            report.errors += lane.errors
            report.retries += lane.retries
            report.unanswered += lane.unanswered
            report.statuses.merge(lane.statuses) { $0 + $1 }
        }
        report.seconds = seconds
        report.requestsPerSecond = seconds > 0 ? Double(report.sent) / seconds : 0
        func milliseconds(_ microseconds: UInt64) -> Double { Double(microseconds) / 1_000 }
        if report.sent > 0 {
            report.p50Milliseconds = milliseconds(histogram.valueAtPercentile(50))
            report.p99Milliseconds = milliseconds(histogram.valueAtPercentile(99))
            report.p999Milliseconds = milliseconds(histogram.valueAtPercentile(99.9))
            report.maxMilliseconds = milliseconds(histogram.max)
        }
        return report
    }

    /// A URL the load generator cannot post to.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// What the connections share: the next body to post, and the running counts.
    private final class Shared: Sendable {
        package let next = Atomic<Int>(0)
        package let counts = Mutex((sent: 0, ok: 0))
    }

    /// What one connection's requests got.
    package struct Lane: Sendable {
        package var latencies: [UInt64] = []
        package var ok = 0
        package var errors = 0
        package var retries = 0
        package var statuses: [String: Int] = [:]
        package var unanswered: [Int] = []

        package mutating func record(index: Int, status: Int?, microseconds: Int64) {
            latencies.append(UInt64(max(1, microseconds)))
            if status != 200 { unanswered.append(index) }
            switch status {
            case 200: ok += 1
            case let code?: statuses[String(code), default: 0] += 1
            case nil: errors += 1
            }
        }
    }
}
