import AppStoreModels
import Foundation
import HistorySync
import HistoryTestSupport
import KafkaClient
import NIOCore
import NotificationStore
import PipelineContract
import ServiceLifecycle
import Synchronization
import Testing

@Suite("History sync: Apple's notification history into the raw topic, resumable, with Apple's retry rules")
struct HistorySyncTests {
    @Test(
        "every request carries a fresh ES256 token Apple accepts; bodies land as the ingress writes them"
    )
    func pagesAndTokens() async throws {
        let history = try HistorySyncRig.signedHistory(count: 45)
        try await HistorySyncRig.run(history: history) { rig in
            let sync = try rig.sync()
            let progress = try await sync.sync(HistorySyncRig.request, environment: .sandbox)
            #expect(progress.isComplete)
            #expect((progress.pages, progress.notifications, progress.resumed) == (3, 45, false))

            let log = rig.apple.log
            #expect(log.requests == 3)
            #expect(log.invalidTokens == 0)
            #expect(log.tokens.count == log.requests, "a new token for every request")
            #expect(log.paginationTokens.first == .some(nil), "no token on a window's first page")
            #expect(log.paginationTokens.dropFirst().allSatisfy { $0 != nil })
            let body = try #require(log.bodies.first)
            #expect(body["startDate"] as? Int == Int(HistorySyncRig.window.start.timeIntervalSince1970) * 1000)
            #expect(body["endDate"] as? Int == Int(HistorySyncRig.window.end.timeIntervalSince1970) * 1000)
            #expect(body["transactionId"] == nil && body["notificationType"] == nil)

            let messages = try await rig.rawMessages()
            #expect(messages.count == 45)
            #expect(Set(messages.compactMap(\.signedPayload)) == Set(history))
            for message in messages {
                let headers = try RawNotificationHeaders(fields: message.headerFields)
                #expect(headers.source == .history)
                #expect(headers.environment == .sandbox)
                #expect((headers.app, headers.version) == ("notes", 2))
                let body = Data(message.value.readableBytesView)
                #expect(message.key.map { String(buffer: $0) } == PartitionKey.peek(body: body, version: 2)?.value)
            }

            // A finished window is not fetched again.
            let again = try await sync.sync(HistorySyncRig.request, environment: .sandbox)
            #expect(again.isComplete && again.pagesThisRun == 0)
            #expect(rig.apple.log.requests == 3)
        }
    }

    @Test("a 1,000-notification history stopped part-way resumes at its checkpoint and completes without gaps")
    func resumes() async throws {
        let history = try HistorySyncRig.signedHistory(count: 1_000)
        try await HistorySyncRig.run(history: history) { rig in
            let sync = try rig.sync()
            // Stop the run after its tenth page, as a SIGTERM would: its task is cancelled.
            let first = try await Task {
                try await sync.sync(HistorySyncRig.request, environment: .sandbox) { progress in
                    if progress.pagesThisRun == 10 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }.value
            #expect(!first.isComplete)
            #expect((first.pages, first.notifications) == (10, 200))

            let second = try await sync.sync(HistorySyncRig.request, environment: .sandbox)
            #expect(second.resumed && second.isComplete)
            #expect((second.pages, second.notifications, second.pagesThisRun) == (50, 1_000, 40))
            #expect(rig.apple.log.paginationTokens[10] == "g0-p10", "the second run starts at the saved token")

            let payloads = try await rig.rawMessages().compactMap(\.signedPayload)
            #expect(payloads.count == 1_000, "each page produced once")
            #expect(Set(payloads) == Set(history))
        }
    }

    @Test("429 waits until Retry-After; 500 GeneralInternalRetryable backs off; then the sync completes")
    func retries() async throws {
        let history = try HistorySyncRig.signedHistory(count: 30)
        try await HistorySyncRig.run(history: history) { rig in
            rig.apple.queue(.rateLimited(retryAfter: .milliseconds(400)), .internalRetryable, .internalRetryable)
            let progress = try await rig.sync().sync(HistorySyncRig.request, environment: .sandbox)
            #expect(progress.isComplete && progress.notifications == 30)
            #expect(progress.requests.rateLimited == 1)
            #expect(progress.requests.retried == 2)
            let log = rig.apple.log
            #expect(log.requests == 5)
            // The retry after the 429 waited for the time Apple named (loosely: most of it).
            let waited = log.arrivals[0].duration(to: log.arrivals[1])
            #expect(waited >= .milliseconds(300), "\(waited)")
            #expect(try await rig.rawMessages().count == 30)
        }
    }

    @Test("an expired pagination token starts the window again; every notification still arrives")
    func expiredToken() async throws {
        let history = try HistorySyncRig.signedHistory(count: 100)
        try await HistorySyncRig.run(history: history) { rig in
            rig.apple.expireTokens(atPage: 3)
            let progress = try await rig.sync().sync(HistorySyncRig.request, environment: .sandbox)
            #expect(progress.isComplete)
            #expect(progress.restarts == 1)
            #expect(rig.apple.log.paginationTokens.filter { $0 == nil }.count == 2, "the window started twice")
            let payloads = try await rig.rawMessages().compactMap(\.signedPayload)
            #expect(Set(payloads) == Set(history))
            #expect(payloads.count == 60 + 100, "three pages before the expiry, then all five; workers dedupe")
        }
    }

    @Test("401 is a clear error about the API key and is not retried; a wrong key is refused the same way")
    func unauthorized() async throws {
        try await HistorySyncRig.run(history: try HistorySyncRig.signedHistory(count: 5)) { rig in
            rig.apple.queue(.unauthorized)
            let error = await #expect(throws: HistorySyncError.self) {
                try await rig.sync().sync(HistorySyncRig.request, environment: .sandbox)
            }
            #expect(error?.code == .unauthorized)
            #expect(error?.isRetriable == false)
            #expect(error?.description.contains("key id") == true)
            #expect(rig.apple.log.requests == 1)

            let otherKey = FakeAppStoreServer(bundleID: HistorySyncRig.bundleID, history: []).privateKeyPEM
            let refused = await #expect(throws: HistorySyncError.self) {
                try await rig.sync(privateKeyPEM: otherKey).sync(HistorySyncRig.request, environment: .sandbox)
            }
            #expect(refused?.code == .unauthorized)
            #expect(rig.apple.log.invalidTokens == 1)
            let produced = try await rig.rawMessages()
            #expect(produced.isEmpty)
        }
    }

    @Test("5xx past the retry budget fails as retriable UNAVAILABLE; a later run resumes from the checkpoint")
    func givesUp() async throws {
        let history = try HistorySyncRig.signedHistory(count: 40)
        try await HistorySyncRig.run(history: history) { rig in
            let sync = try rig.sync(maximumAttempts: 3)
            // The first page succeeds, then the second fails three times in a row.
            let firstPage = Mutex(false)
            let error = await #expect(throws: HistorySyncError.self) {
                try await sync.sync(HistorySyncRig.request, environment: .sandbox) { progress in
                    if progress.pagesThisRun == 1 {
                        firstPage.withLock { $0 = true }
                        rig.apple.queue(.internalRetryable, .internalRetryable, .internalRetryable)
                    }
                }
            }
            #expect(firstPage.withLock { $0 })
            #expect(error?.code == .unavailable)
            #expect(error?.isRetriable == true)
            #expect(rig.apple.log.requests == 4)

            let resumed = try await sync.sync(HistorySyncRig.request, environment: .sandbox)
            #expect(resumed.resumed && resumed.isComplete && resumed.pagesThisRun == 1)
            #expect(try await rig.rawMessages().count == 40)
        }
    }

    @Test(
        """
        a sandbox window reaching 45 days back asks Apple from 30 days ago less the margin, reports the range it \
        skipped, and completes; a window wholly older asks nothing
        """
    )
    func startDateLimit() async throws {
        let history = try HistorySyncRig.signedHistory(count: 25)
        try await HistorySyncRig.run(history: history) { rig in
            let end = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60)
            let request = NotificationHistoryRequest(start: end.addingTimeInterval(-45 * 86_400), end: end)
            let sync = try rig.sync()
            let before = Date()
            let progress = try await sync.sync(request, environment: .sandbox)
            let after = Date()
            #expect(progress.isComplete && progress.notifications == 25)
            #expect(progress.window.start == end.addingTimeInterval(-45 * 86_400), "the checkpoint keeps the window")
            // Apple's 30 days less the one-hour margin, as of some moment during the sync.
            let skippedTo = try #require(progress.unfetchableBefore)
            let limit: TimeInterval = -30 * 86_400 + 3_600
            #expect(skippedTo.timeIntervalSince(before.addingTimeInterval(limit)) >= -0.001)
            #expect(skippedTo.timeIntervalSince(after.addingTimeInterval(limit)) <= 0.001)
            let starts = rig.apple.log.bodies.compactMap { $0["startDate"] as? Int }
            let skippedToMilliseconds = Int((skippedTo.timeIntervalSince1970 * 1000).rounded())
            #expect(starts == [skippedToMilliseconds, skippedToMilliseconds], "both pages ask from there")
            #expect(try await rig.rawMessages().count == 25)

            let gone = NotificationHistoryRequest(
                start: end.addingTimeInterval(-45 * 86_400),
                end: end.addingTimeInterval(-40 * 86_400)
            )
            let nothing = try await sync.sync(gone, environment: .sandbox)
            #expect(nothing.isComplete && nothing.pagesThisRun == 0)
            #expect(nothing.unfetchableBefore == nothing.window.end)
            #expect(rig.apple.log.requests == 2)
        }
    }

    @Test("the rate limiter spaces requests evenly, shared by every caller")
    func rateLimiter() async throws {
        let limiter = RequestRateLimiter(requestsPerSecond: 20)
        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<6 { group.addTask { await limiter.acquire() } }
        }
        // Six slots 50 ms apart: the last one at least 250 ms after the first.
        #expect(start.duration(to: .now) >= .milliseconds(240))
    }
}

@Suite("The reconciler as a periodic service")
struct PeriodicHistorySyncTests {
    /// Runs a periodic sync of the rig's history (the last hour, a turn every 50 ms) until `count` turns ended, or the
    /// service group ended by itself, then shuts it down gracefully; the turns' outcomes.
    static func runTurns(
        _ count: Int,
        on rig: HistorySyncRig
    ) async throws -> [Result<HistorySyncProgress, HistorySyncError>] {
        let turns = Mutex<[Result<HistorySyncProgress, HistorySyncError>]>([])
        let turnEnded = AsyncStream<Void>.makeStream()
        var service = PeriodicHistorySync(
            sync: try rig.sync(),
            environment: .sandbox,
            interval: .milliseconds(50),
            lookback: .seconds(3_600),
            logger: rig.logger
        )
        service.onTurn = { outcome in
            turns.withLock { $0.append(outcome) }
            turnEnded.continuation.yield()
        }
        let group = ServiceGroup(services: [service], logger: rig.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                // A service that ends the group ends the stream too, so the test does not wait for ever.
                defer { turnEnded.continuation.finish() }
                try await group.run()
            }
            var ended = turnEnded.stream.makeAsyncIterator()
            for _ in 0..<count { await ended.next() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        return turns.withLock { $0 }
    }

    @Test("each turn syncs the last lookback; a graceful shutdown ends the service without an error")
    func turnsAndShutdown() async throws {
        let history = try HistorySyncRig.signedHistory(count: 25)
        try await HistorySyncRig.run(history: history) { rig in
            let first = try #require(try await Self.runTurns(1, on: rig).first)
            let progress = try first.get()
            #expect(progress.isComplete && progress.notifications == 25)
            let window = progress.window.end.timeIntervalSince(progress.window.start)
            #expect(window == 3_600)
            #expect(progress.window.end.timeIntervalSince1970.truncatingRemainder(dividingBy: 60) == 0)
            #expect(try await rig.rawMessages().count == 25)
        }
    }

    @Test(
        """
        Apple refusing a turn's start as too old (4000012) fails that turn as RANGE_GONE, not retriable, and the \
        service goes on with its next turn
        """
    )
    func rangeGone() async throws {
        let history = try HistorySyncRig.signedHistory(count: 5)
        try await HistorySyncRig.run(history: history) { rig in
            rig.apple.queue(.startDateTooFarInPast)
            let outcomes = try await Self.runTurns(2, on: rig)
            #expect(outcomes.count >= 2, "the service ran a second turn")
            guard case .failure(let error) = try #require(outcomes.first) else {
                Issue.record("the first turn did not fail")
                return
            }
            #expect(error.code == .rangeGone && !error.isRetriable)
            #expect(error.appleErrorCode == AppStoreServerAPIClient.startDateTooFarInPast)
            let second = try #require(outcomes.dropFirst().first).get()
            #expect(second.isComplete && second.notifications == 5)
        }
    }
}
