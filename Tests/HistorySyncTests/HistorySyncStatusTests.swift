import AppStoreModels
import AppStoreTestSupport
import AsyncHTTPClient
import Foundation
import HistorySync
import HistoryTestSupport
import NIOCore
import NIOHTTP1
import PipelineServices
import PipelineStatus
import ServiceLifecycle
import Testing

@Suite("The periodic reconciler's status server: its turns on /metrics, its probes", .tags(.pipeline))
struct HistorySyncStatusTests {
    @Test(
        """
        a failed turn, then a successful one, are counted on /metrics scraped over HTTP (turns by outcome, pages, \
        notifications, the last success's time, the last turn's duration); /health/live and /health/ready answer 200
        """
    )
    func metricsAfterTurns() async throws {
        let history = try HistorySyncRig.signedHistory(count: 25)
        try await HistorySyncRig.run(apple: .lastHour(history)) { rig in
            // The first turn's first request fails twice: past its retry budget of two attempts.
            rig.apple.queue(.internalRetryable, .internalRetryable)
            let turns = AsyncStream<Result<HistorySyncProgress, HistorySyncError>>.makeStream()
            var service = PeriodicHistorySync(
                syncs: [try rig.sync(maximumAttempts: 2)],
                interval: .seconds(2),
                lookback: .seconds(3_600),
                logger: rig.logger
            )
            service.onTurn = { turns.continuation.yield($0) }
            try await rig.withStatusServer(service) { status in
                var outcomes = turns.stream.makeAsyncIterator()
                let labels = #"app="notes",environment="Sandbox""#
                let turnsFailed = #"asnp_history_turns_total{\#(labels),outcome="failed"}"#
                let turnsSucceeded = #"asnp_history_turns_total{\#(labels),outcome="succeeded"}"#

                // Before the first turn's end, scrapes see every series at 0 (not checked: the turn may be over).
                let failed = try #require(await outcomes.next())
                guard case .failure(let error) = failed else {
                    Issue.record("the first turn should fail, not \(failed)")
                    return
                }
                #expect(error.code == .unavailable)
                let afterFailure = try await status.metrics()
                #expect(afterFailure[turnsFailed] == 1)
                #expect(afterFailure[turnsSucceeded] == 0)
                #expect(afterFailure["asnp_history_pages_total{\(labels)}"] == 0)
                #expect(afterFailure["asnp_history_notifications_total{\(labels)}"] == 0)
                #expect(afterFailure["asnp_history_last_success_timestamp_seconds{\(labels)}"] == 0)
                #expect((afterFailure["asnp_history_last_turn_duration_seconds{\(labels)}"] ?? -1) > 0)

                // The next turn, an interval later, takes up the failed turn's range (25 notifications in two pages),
                // then the two seconds since (a page, empty).
                let beforeSuccess = Date().timeIntervalSince1970
                let succeeded = try #require(await outcomes.next())
                #expect((try? succeeded.get())?.isComplete == true)
                let afterSuccess = try await status.metrics()
                #expect(afterSuccess[turnsFailed] == 1)
                #expect(afterSuccess[turnsSucceeded] == 1)
                #expect(afterSuccess["asnp_history_pages_total{\(labels)}"] == 3)
                #expect(afterSuccess["asnp_history_notifications_total{\(labels)}"] == 25)
                #expect(afterSuccess[#"asnp_history_ranges_total{\#(labels),outcome="covered"}"#] == 2)
                #expect(afterSuccess[#"asnp_history_ranges_total{\#(labels),outcome="lost"}"#] == 0)
                let settled = try #require(afterSuccess["asnp_history_settled_until_timestamp_seconds{\(labels)}"])
                #expect(settled > beforeSuccess - 3_600 && settled < Date().timeIntervalSince1970)
                #expect((afterSuccess["asnp_history_covered_seconds{\(labels)}"] ?? 0) > 3_000)
                let lastSuccess = try #require(afterSuccess["asnp_history_last_success_timestamp_seconds{\(labels)}"])
                #expect(lastSuccess >= beforeSuccess && lastSuccess <= Date().timeIntervalSince1970)
                #expect(try await rig.rawMessages().count == 25)

                #expect(try await status.get("/health/live") == (200, "live\n"))
                #expect(try await status.get("/health/ready") == (200, "ready\n"))
            }
        }
    }

    @Test("/health/live fails while a turn runs longer than its bound, and answers 200 again between turns")
    func stuckTurn() async throws {
        let history = try HistorySyncRig.signedHistory(count: 5)
        try await HistorySyncRig.run(apple: .lastHour(history)) { rig in
            // Apple makes the first turn wait three seconds; the bound is 200 ms.
            rig.apple.queue(.rateLimited(retryAfter: .seconds(3)))
            let turnEnded = AsyncStream<Void>.makeStream()
            var service = PeriodicHistorySync(
                syncs: [try rig.sync()],
                interval: .seconds(3_600),
                lookback: .seconds(3_600),
                logger: rig.logger
            )
            service.stuckAfter = .milliseconds(200)
            service.onTurn = { _ in turnEnded.continuation.yield() }
            try await rig.withStatusServer(service) { status in
                let stuck = try await eventually(timeout: .seconds(10)) {
                    try await status.get("/health/live").status == 503
                }
                #expect(stuck)
                let live = try await status.get("/health/live")
                #expect(live.body.hasPrefix("not live: a history sync turn has been in progress for more than"))
                #expect(try await status.get("/health/ready").status == 200)

                var ended = turnEnded.stream.makeAsyncIterator()
                await ended.next()
                #expect(try await status.get("/health/live") == (200, "live\n"))
            }
        }
    }
}

extension HistorySyncRig {
    /// Runs `service` and its status server (on a free port of 127.0.0.1) while `body` runs, then shuts both down
    /// gracefully.
    func withStatusServer(
        _ service: PeriodicHistorySync,
        _ body: (StatusClient) async throws -> Void
    ) async throws {
        let listening = AsyncStream<Int>.makeStream()
        let server = service.statusServer(
            configuration: StatusServerConfiguration(host: "127.0.0.1", port: 0),
            registry: service.syncs[0].metrics.registry,
            logger: logger,
            onListening: { listening.continuation.yield($0) }
        )
        let group = ServiceGroup(services: [server, service], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var ports = listening.stream.makeAsyncIterator()
            let port = try #require(await ports.next())
            try await body(StatusClient(port: port))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}

extension FakeAppStoreServer {
    /// Apple's sandbox with `history` sent over the last hour but the settle time: what a periodic turn's first
    /// window (an hour's lookback) holds.
    static func lastHour(_ history: [String]) -> FakeAppStoreServer {
        let now = Date()
        return FakeAppStoreServer(
            bundleID: HistorySyncRig.bundleID,
            history: history,
            spread: now.addingTimeInterval(-3_000)..<now.addingTimeInterval(-400)
        )
    }
}

/// GETs on a status server over HTTP.
struct StatusClient {
    let port: Int

    func get(_ path: String) async throws -> (status: UInt, body: String) {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"),
            timeout: .seconds(10)
        )
        return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// `/metrics`' samples by series, written as Prometheus writes them (`name{label="value",...}`).
    func metrics() async throws -> [String: Double] {
        let (status, body) = try await get("/metrics")
        #expect(status == 200)
        var samples: [String: Double] = [:]
        for line in body.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }
}
