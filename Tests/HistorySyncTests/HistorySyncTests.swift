import AppStoreModels
import AppStoreTestSupport
import Foundation
import HistorySync
import HistoryTestSupport
import KafkaClient
import NIOCore
import NotificationStore
import PipelineContract
import PipelineTracing
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing

@Suite(
    "History sync: Apple's notification history into the raw topic, resumable, with Apple's retry rules",
    .tags(.pipeline)
)
struct HistorySyncTests {
    @Test(
        "every request carries a fresh ES256 token Apple accepts; bodies land as the ingress writes them"
    )
    func pagesAndTokens() async throws {
        let history = try HistorySyncRig.signedHistory(count: 45)
        try await HistorySyncRig.run(history: history) { rig in
            let sync = try rig.sync()
            let window = HistorySyncRig.window
            let progress = try await sync.sync(from: window.lowerBound, to: window.upperBound)
            #expect(progress.isComplete)
            #expect((progress.pages, progress.notifications, progress.resumedRanges) == (3, 45, 0))
            #expect(progress.coveredRanges == [window])
            let ledger = try await rig.ledger()
            #expect(ledger.entries.map(\.state) == [.covered] && ledger.entries.first?.range == window)
            #expect((ledger.entries.first?.pages, ledger.entries.first?.notifications) == (3, 45))

            let log = rig.apple.log
            #expect(log.requests == 3)
            #expect(log.invalidTokens == 0)
            #expect(log.tokens.count == log.requests, "a new token for every request")
            #expect(log.paginationTokens.first == .some(nil), "no token on a window's first page")
            #expect(log.paginationTokens.dropFirst().allSatisfy { $0 != nil })
            let body = try #require(log.bodies.first)
            #expect(body["startDate"] as? Int == Int(window.lowerBound.timeIntervalSince1970) * 1000)
            #expect(body["endDate"] as? Int == Int(window.upperBound.timeIntervalSince1970) * 1000)
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

            // A covered window is not fetched again, nor any part of it.
            let again = try await sync.sync(from: window.lowerBound, to: window.upperBound)
            let part = try await sync.sync(from: window.lowerBound.addingTimeInterval(86_400), to: window.upperBound)
            #expect(again.isComplete && again.pages == 0 && part.isComplete && part.pages == 0)
            #expect(rig.apple.log.requests == 3)
        }
    }

    @Test(
        """
        traced: a sync is one span (asnp.source history), each page a client span beneath it, and each page's \
        notifications go to the raw topic in that page's trace, for the worker to continue
        """
    )
    func traced() async throws {
        let history = try HistorySyncRig.signedHistory(count: 45)
        let collector = OTLPTestCollector()
        var messages: [KafkaMessage] = []
        try await collector.serve { endpoint in
            try await HistorySyncRig.run(history: history) { rig in
                var configuration = TracingConfiguration(serviceName: "asnp-history")
                configuration.isEnabled = true
                configuration.endpoint = endpoint
                configuration.otlpProtocol = .httpJSON
                configuration.samplingRatio = 1
                let backend = try TracingBackend.make(configuration, logger: rig.logger)
                let exporter = ServiceGroup(
                    services: [try #require(backend.service)],
                    gracefulShutdownSignals: [],
                    cancellationSignals: [],
                    logger: rig.logger
                )
                let exporting = Task { try await exporter.run() }
                let sync = try rig.sync(tracer: try #require(backend.tracer))
                let window = HistorySyncRig.window
                let progress = try await sync.sync(from: window.lowerBound, to: window.upperBound)
                #expect(progress.isComplete && progress.pages == 3)
                messages = try await rig.rawMessages()
                // A graceful shutdown exports what is left.
                await exporter.triggerGracefulShutdown()
                try await exporting.value
            }
        }
        #expect(collector.unreadableExports.isEmpty, "\(collector.unreadableExports)")
        let syncSpan = try #require(collector.spans.first { $0.name == "history sync" }, "\(collector.spans)")
        #expect(syncSpan.attributes["asnp.source"] == "history" && syncSpan.attributes["asnp.app"] == "notes")
        #expect(syncSpan.attributes["asnp.history.notifications"] == "45" && syncSpan.statusCode != 2)
        let pages = collector.spans.filter { $0.name == "history page" }
        #expect(pages.count == 3)
        #expect(
            pages.allSatisfy { $0.parentSpanID == syncSpan.spanID && $0.traceID == syncSpan.traceID && $0.kind == 3 }
        )
        #expect(pages.compactMap { $0.attributes["asnp.history.notifications"].flatMap { Int($0) } }.reduce(0, +) == 45)
        #expect(messages.count == 45)
        var fedBy: [String: Int] = [:]
        for message in messages {
            let parent = try #require(message.headers.first(named: TraceContextHeaders.traceparent))
            let parts = parent.split(separator: "-").map(String.init)
            #expect(parts.count == 4 && parts[1] == syncSpan.traceID, "\(parent)")
            fedBy[parts[2], default: 0] += 1
        }
        #expect(Set(fedBy.keys) == Set(pages.map(\.spanID)), "every page's notifications in its own span")
    }

    @Test("a 1,000-notification history stopped part-way resumes at its saved page and completes without gaps")
    func resumes() async throws {
        let history = try HistorySyncRig.signedHistory(count: 1_000)
        try await HistorySyncRig.run(history: history) { rig in
            let sync = try rig.sync()
            let window = HistorySyncRig.window
            // Stop the run after its tenth page, as a SIGTERM would: its task is cancelled.
            let first = try await Task {
                try await sync.sync(from: window.lowerBound, to: window.upperBound) { progress in
                    if progress.pages == 10 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }.value
            #expect(!first.isComplete)
            #expect((first.pages, first.notifications) == (10, 200))
            let inProgress = try #require(try await rig.ledger().entries.first)
            #expect((inProgress.state, inProgress.paginationToken, inProgress.pages) == (.inProgress, "g0-p10", 10))

            let second = try await sync.sync(from: window.lowerBound, to: window.upperBound)
            #expect(second.resumedRanges == 1 && second.isComplete)
            #expect((second.pages, second.notifications) == (40, 800))
            let covered = try #require(try await rig.ledger().entries.first)
            #expect((covered.state, covered.pages, covered.notifications) == (.covered, 50, 1_000))
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
            let window = HistorySyncRig.window
            let progress = try await rig.sync().sync(from: window.lowerBound, to: window.upperBound)
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
            let window = HistorySyncRig.window
            let progress = try await rig.sync().sync(from: window.lowerBound, to: window.upperBound)
            #expect(progress.isComplete)
            #expect(progress.restarts == 1)
            #expect(rig.apple.log.paginationTokens.filter { $0 == nil }.count == 2, "the range started twice")
            let covered = try #require(try await rig.ledger().entries.first)
            #expect((covered.state, covered.pages, covered.notifications) == (.covered, 5, 100), "counted once")
            let payloads = try await rig.rawMessages().compactMap(\.signedPayload)
            #expect(Set(payloads) == Set(history))
            #expect(payloads.count == 60 + 100, "three pages before the expiry, then all five; workers dedupe")
        }
    }

    @Test("401 is a clear error about the API key and is not retried; a wrong key is refused the same way")
    func unauthorized() async throws {
        try await HistorySyncRig.run(history: try HistorySyncRig.signedHistory(count: 5)) { rig in
            rig.apple.queue(.unauthorized)
            let window = HistorySyncRig.window
            let error = await #expect(throws: HistorySyncError.self) {
                try await rig.sync().sync(from: window.lowerBound, to: window.upperBound)
            }
            #expect(error?.code == .unauthorized)
            #expect(error?.isRetriable == false)
            #expect(error?.description.contains("key id") == true)
            #expect(rig.apple.log.requests == 1)
            let noted = try #require(try await rig.ledger().entries.first)
            #expect(noted.state == .inProgress && noted.note?.hasPrefix("UNAUTHORIZED") == true, "\(noted)")

            let otherKey = FakeAppStoreServer(bundleID: HistorySyncRig.bundleID, history: []).privateKeyPEM
            let refused = await #expect(throws: HistorySyncError.self) {
                try await rig.sync(privateKeyPEM: otherKey).sync(from: window.lowerBound, to: window.upperBound)
            }
            #expect(refused?.code == .unauthorized)
            #expect(rig.apple.log.invalidTokens == 1)
            let produced = try await rig.rawMessages()
            #expect(produced.isEmpty)
        }
    }

    @Test("5xx past the retry budget fails as retriable UNAVAILABLE, noted in the ledger; a later run resumes")
    func givesUp() async throws {
        let history = try HistorySyncRig.signedHistory(count: 40)
        try await HistorySyncRig.run(history: history) { rig in
            let sync = try rig.sync(maximumAttempts: 3)
            let window = HistorySyncRig.window
            // The first page succeeds, then the second fails three times in a row.
            let firstPage = Mutex(false)
            let error = await #expect(throws: HistorySyncError.self) {
                try await sync.sync(from: window.lowerBound, to: window.upperBound) { progress in
                    if progress.pages == 1 {
                        firstPage.withLock { $0 = true }
                        rig.apple.queue(.internalRetryable, .internalRetryable, .internalRetryable)
                    }
                }
            }
            #expect(firstPage.withLock { $0 })
            #expect(error?.code == .unavailable)
            #expect(error?.isRetriable == true)
            #expect(rig.apple.log.requests == 4)

            let noted = try #require(try await rig.ledger().entries.first)
            #expect(noted.paginationToken == "g0-p1" && noted.note?.hasPrefix("UNAVAILABLE") == true, "\(noted)")

            let resumed = try await sync.sync(from: window.lowerBound, to: window.upperBound)
            #expect(resumed.resumedRanges == 1 && resumed.isComplete && resumed.pages == 1)
            #expect(try await rig.ledger().entries.map(\.note) == [nil], "the next page clears the note")
            #expect(try await rig.rawMessages().count == 40)
        }
    }

    @Test(
        """
        a sandbox sync reaching 45 days back records the first 15 days (and the margin) as lost, asks Apple from \
        there, a day at a time, and covers the rest; a rerun asks nothing, a window wholly older asks nothing
        """
    )
    func startDateLimit() async throws {
        let history = try HistorySyncRig.signedHistory(count: 25)
        try await HistorySyncRig.run(history: history) { rig in
            let now = Date().wholeMilliseconds
            let clock = ManualHistoryClock(now: now)
            let sync = try rig.sync(rangeLimit: .seconds(86_400), clock: clock)
            let start = now.addingTimeInterval(-45 * 86_400)
            let progress = try await sync.sync(from: start)
            #expect(progress.isComplete && progress.notifications == 25)
            // Apple's 30 days less the one-hour margin.
            let limit = now.addingTimeInterval(-30 * 86_400 + 3_600)
            #expect(progress.lostRanges == [start..<limit])
            let ledger = try await rig.ledger()
            #expect(ledger.entries.map(\.state) == [.lost, .covered])
            #expect(ledger.entries.first?.note == "older than Apple keeps (30 days in Sandbox)")
            #expect(
                ledger.entries.last?.range == limit..<now.addingTimeInterval(-300),
                "up to now less the settle time"
            )
            #expect(ledger.settledUntil == now.addingTimeInterval(-300))
            let starts = rig.apple.log.bodies.compactMap { $0["startDate"] as? Int }
            #expect(
                starts.first == Int((limit.timeIntervalSince1970 * 1000).rounded(.down)),
                "the first range asks from there"
            )
            #expect(starts.count >= 30, "a request (or more) for each of the 30 days")
            #expect(try await rig.rawMessages().count == 25)

            let requests = rig.apple.log.requests
            let again = try await sync.sync(from: start)
            let gone = try await sync.sync(from: start, to: start.addingTimeInterval(5 * 86_400))
            #expect(again.isComplete && gone.isComplete && again.lostRanges.isEmpty)
            #expect(rig.apple.log.requests == requests, "no endless retry of what is gone or covered")
        }
    }

    @Test(
        """
        a sync without an end, stopped part-way, resumes when run again later without an end: the range in \
        progress at its page, then what came since
        """
    )
    func resumesWithoutEnd() async throws {
        let payloads = try HistorySyncRig.signedHistory(count: 120)
        let clock = ManualHistoryClock(now: Date().wholeMilliseconds)
        let start = clock.now().addingTimeInterval(-2 * 86_400)
        // Two days of history up to an hour from now, an item every 24 minutes.
        let items = payloads.enumerated().map { index, payload in
            FakeAppStoreServer.Item(signedPayload: payload, sentAt: start.addingTimeInterval(Double(index) * 1_470))
        }
        let apple = FakeAppStoreServer(sandbox: [HistorySyncRig.bundleID: items], now: { clock.now() })
        try await HistorySyncRig.run(apple: apple) { rig in
            let sync = try rig.sync(rangeLimit: .seconds(86_400), clock: clock)
            let first = try await Task {
                try await sync.sync(from: start) { progress in
                    if progress.pages == 4 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }.value
            #expect(!first.isComplete && first.pages == 4)

            clock.advance(by: 3_600)
            let second = try await sync.sync(from: start)
            #expect(second.isComplete && second.resumedRanges == 1)
            let ledger = try await rig.ledger()
            #expect(ledger.entries.map(\.state) == [.covered])
            #expect(ledger.entries.first?.range == start..<clock.now().addingTimeInterval(-300))
            let sent = Set(items.filter { $0.sentAt < clock.now().addingTimeInterval(-300) }.map(\.signedPayload))
            #expect(Set(try await rig.rawMessages().compactMap(\.signedPayload)) == sent)
            #expect(first.notifications + second.notifications == sent.count, "nothing fetched twice")
        }
    }

    @Test(
        """
        failed deliveries: each notification's last result and whether any attempt succeeded are recorded and \
        counted by result; onlyFailures narrows to what was never delivered, in a ledger of its own
        """
    )
    func failedDeliveries() async throws {
        let payloads = try HistorySyncRig.signedHistory(count: 6)
        let sent = HistorySyncRig.window.lowerBound.addingTimeInterval(3_600)
        let attempt = { (offset: Double, result: SendAttemptResult) in
            SendAttemptItem(attemptDate: Int64((sent.timeIntervalSince1970 + offset) * 1000), sendAttemptResult: result)
        }
        let attempts: [[SendAttemptItem]] = [
            [attempt(0, .success)],
            [attempt(0, .success)],
            [attempt(0, .timedOut), attempt(60, .timedOut)],
            [attempt(0, .timedOut), attempt(60, .tlsIssue)],
            [attempt(0, .noResponse), attempt(60, .success)],
            [attempt(0, .tlsIssue), attempt(60, .tlsIssue)],
        ]
        let items = zip(payloads, attempts).map {
            FakeAppStoreServer.Item(signedPayload: $0, sentAt: sent, sendAttempts: $1)
        }
        try await HistorySyncRig.run(apple: FakeAppStoreServer(sandbox: [HistorySyncRig.bundleID: items])) { rig in
            let window = HistorySyncRig.window
            let sync = try rig.sync()
            let progress = try await sync.sync(from: window.lowerBound, to: window.upperBound)
            #expect(progress.failedDeliveries == ["TIMED_OUT": 1, "TLS_ISSUE": 2, "SUCCESS": 1])
            let summaries = try await rig.store.historyDeliverySummaries()
            #expect(summaries.map(\.notifications) == [1, 1, 2])
            let byResult = Dictionary(uniqueKeysWithValues: summaries.map { ($0.lastResult, $0.neverDelivered) })
            #expect(byResult == ["SUCCESS": 0, "TIMED_OUT": 1, "TLS_ISSUE": 2])
            var scrape: [UInt8] = []
            sync.metrics.registry.emit(into: &scrape)
            let metrics = String(decoding: scrape, as: UTF8.self)
            #expect(metrics.contains(#"result="TLS_ISSUE"} 2"#), "\(metrics)")
            #expect(metrics.contains(#"result="TIMED_OUT"} 1"#) && metrics.contains(#"result="OTHER"} 0"#))

            let onlyFailures = NotificationHistoryFilter(onlyFailures: true)
            let failures = try await sync.sync(from: window.lowerBound, to: window.upperBound, filter: onlyFailures)
            #expect(failures.notifications == 3, "the three never delivered")
            #expect(rig.apple.log.bodies.last?["onlyFailures"] as? Bool == true)
            let ledger = try await rig.store.historyLedger(for: sync.ledgerKey(onlyFailures))
            #expect(ledger.key.filter == "onlyFailures" && ledger.entries.map(\.state) == [.covered])
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

@Suite("The reconciler as a periodic service", .tags(.pipeline))
struct PeriodicHistorySyncTests {
    /// Runs a periodic sync of the rig's history (the first turn reaching back an hour, a turn every 50 ms) until
    /// `count` turns ended, or the service group ended by itself, then shuts it down gracefully; the turns' outcomes.
    static func runTurns(
        _ count: Int,
        on rig: HistorySyncRig,
        settleTime: Duration = .seconds(300)
    ) async throws -> [Result<HistorySyncProgress, HistorySyncError>] {
        let turns = Mutex<[Result<HistorySyncProgress, HistorySyncError>]>([])
        let turnEnded = AsyncStream<Void>.makeStream()
        let sync = try rig.sync(settleTime: settleTime)
        var service = PeriodicHistorySync(
            syncs: [sync],
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

    @Test("the first turn syncs a lookback up to now less the settle time; a graceful shutdown ends it cleanly")
    func turnsAndShutdown() async throws {
        let history = try HistorySyncRig.signedHistory(count: 25)
        try await HistorySyncRig.run(apple: .lastHour(history)) { rig in
            let started = Date()
            let outcomes = try await Self.runTurns(2, on: rig)
            let elapsed = Date().timeIntervalSince(started)
            let first = try #require(outcomes.first).get()
            #expect(first.isComplete && first.notifications == 25)
            // The lookback's start and the window's end are read from the clock one after the other (in whole
            // milliseconds): the window is the lookback and the time between the two readings.
            let span = first.window.upperBound.timeIntervalSince(first.window.lowerBound)
            #expect(span > 3_600 - 0.000_5 && span < 3_600 + elapsed, "the lookback: \(span) s")
            let second = try #require(outcomes.dropFirst().first).get()
            #expect(second.window.lowerBound == first.window.lowerBound, "later turns keep the ledger's run")
            #expect(second.notifications == 0, "nothing fetched twice")
            #expect(try await rig.rawMessages().count == 25)
        }
    }

    @Test(
        """
        Apple refusing a turn's start as too old (4000012) within what this clock reckons it keeps fails that turn \
        as RANGE_GONE, noted in the ledger, and the service goes on with its next turn, which covers the range
        """
    )
    func rangeGone() async throws {
        let history = try HistorySyncRig.signedHistory(count: 5)
        try await HistorySyncRig.run(apple: .lastHour(history)) { rig in
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
            #expect(second.isComplete && second.notifications == 5 && second.resumedRanges == 0)
            #expect(try await rig.ledger().entries.map(\.state) == [.covered])
        }
    }

    @Test(
        """
        a notification Apple lists three hours after it was sent, in a range an earlier turn covered, is fetched by \
        the next turn's second look (Apple's clock) and counted, in the plain ledger and the onlyFailures one alike; \
        what earlier looks fed is not fed again, and each ledger stays one covered range
        """
    )
    func secondLookFindsWhatAppleListedLate() async throws {
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60)
        let clock = ManualHistoryClock(now: start)
        let hour: TimeInterval = 3_600
        let payloads = try HistorySyncRig.signedHistory(count: 3)
        let timedOut = { (sent: Date) in
            [SendAttemptItem(attemptDate: Int64(sent.timeIntervalSince1970 * 1000), sendAttemptResult: .timedOut)]
        }
        // Two listed as soon as sent (one delivered, one not), within the first turn's lookback; the third, never
        // delivered, sent ten minutes after the first turn and listed three hours later.
        let sentLate = start.addingTimeInterval(600)
        let items = [
            FakeAppStoreServer.Item(signedPayload: payloads[0], sentAt: start.addingTimeInterval(-1_800)),
            FakeAppStoreServer.Item(
                signedPayload: payloads[1],
                sentAt: start.addingTimeInterval(-1_200),
                sendAttempts: timedOut(start.addingTimeInterval(-1_200))
            ),
            FakeAppStoreServer.Item(
                signedPayload: payloads[2],
                sentAt: sentLate,
                listedAt: sentLate.addingTimeInterval(3 * hour),
                sendAttempts: timedOut(sentLate)
            ),
        ]
        let apple = FakeAppStoreServer(sandbox: [HistorySyncRig.bundleID: items], now: { clock.now() })
        try await HistorySyncRig.run(apple: apple) { rig in
            let filters = [NotificationHistoryFilter.none, NotificationHistoryFilter(onlyFailures: true)]
            // A sync each: each has metrics of its own.
            let syncs = try filters.map { _ in try rig.sync(rangeLimit: .seconds(86_400), clock: clock) }
            let turns = Mutex<[String: [HistorySyncProgress]]>([:])
            let failures = Mutex<[HistorySyncError]>([])
            let services = zip(filters, syncs).map { filter, sync in
                var service = PeriodicHistorySync(
                    syncs: [sync],
                    filter: filter,
                    interval: .seconds(3_600),
                    lookback: .seconds(3_600),
                    logger: rig.logger
                )
                service.onTurn = { outcome in
                    switch outcome {
                    case .success(let progress): turns.withLock { $0["\(filter)", default: []].append(progress) }
                    case .failure(let error): failures.withLock { $0.append(error) }
                    }
                }
                return service
            }
            let tasks = services.map { service in Task { try await service.run() } }
            try await clock.waitForSleepers(services.count)
            // Turns at start + 1 h to 5 h; the one at 4 h is the first after Apple lists the late notification.
            for _ in 1...5 {
                clock.advance(by: hour)
                try await clock.waitForSleepers(services.count)
            }
            for task in tasks { task.cancel() }
            for task in tasks { _ = await task.result }

            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            let byFilter = turns.withLock { $0 }
            for (filter, sync) in zip(filters, syncs) {
                let progress = byFilter["\(filter)"] ?? []
                #expect(progress.count == 6 && progress.allSatisfy(\.isComplete), "[\(filter)] \(progress)")
                let firstLook = filter.onlyFailures ? 1 : 2
                #expect(progress.map(\.notifications) == [firstLook, 0, 0, 0, 1, 0], "[\(filter)] what each turn fed")
                #expect(progress.map(\.secondLookNotifications) == [0, 0, 0, 0, 1, 0], "[\(filter)]")
                #expect(progress.dropFirst().allSatisfy { $0.secondLookPages > 0 }, "every later turn looks again")
                #expect(progress[4].failedDeliveries == ["TIMED_OUT": 1], "[\(filter)] the late one's failed delivery")
                let ledger = try await rig.store.historyLedger(for: sync.ledgerKey(filter))
                #expect(ledger.entries.map(\.state) == [.covered], "[\(filter)] \(ledger.entries)")
                #expect(ledger.entries.first?.range.contains(sentLate) == true)

                var scrape: [UInt8] = []
                sync.metrics.registry.emit(into: &scrape)
                let metrics = String(decoding: scrape, as: UTF8.self)
                let labels = #"{app="notes",environment="Sandbox"}"#
                #expect(metrics.contains("asnp_history_second_look_notifications_total\(labels) 1\n"), "\(metrics)")
                #expect(metrics.contains("asnp_history_notifications_total\(labels) \(firstLook + 1)\n"))
            }
            // Each ledger fed each notification it lists once: the late one once per ledger, nothing again.
            let fed = try await rig.rawMessages().compactMap(\.signedPayload)
            #expect(payloads.map { payload in fed.filter { $0 == payload }.count } == [1, 2, 2])
        }
    }

    @Test(
        """
        three simulated hours of turns every 10 minutes, in production and the sandbox, with Apple failing for 40 \
        minutes and the service killed twice and restarted after pauses longer than two intervals: the ledger \
        covers the whole span without a gap, and every notification Apple sent in it is on the raw topic
        """
    )
    func simulatedHours() async throws {
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60)
        let clock = ManualHistoryClock(now: start)
        let minute: TimeInterval = 60
        let payloads = try HistorySyncRig.signedHistory(count: 110)
        // Sandbox: an item every 3 minutes from 25 minutes before the start; production: every 4 minutes.
        let sandbox = payloads.prefix(65).enumerated().map { index, payload in
            FakeAppStoreServer.Item(
                signedPayload: payload,
                sentAt: start.addingTimeInterval((-25 + 3 * Double(index)) * minute)
            )
        }
        let production = payloads.dropFirst(65).enumerated().map { index, payload in
            FakeAppStoreServer.Item(
                signedPayload: payload,
                sentAt: start.addingTimeInterval((-25 + 4 * Double(index)) * minute)
            )
        }
        let apple = FakeAppStoreServer(
            sandbox: [HistorySyncRig.bundleID: sandbox],
            production: [HistorySyncRig.bundleID: production],
            now: { clock.now() }
        )
        apple.setOutage(start.addingTimeInterval(60 * minute)..<start.addingTimeInterval(100 * minute))
        try await HistorySyncRig.run(apple: apple) { rig in
            let syncs = try [AppStoreEnvironment.sandbox, .production].map { environment in
                try rig.sync(environment: environment, maximumAttempts: 3, rangeLimit: .seconds(86_400), clock: clock)
            }
            let failedTurns = Mutex(0)
            func startService() -> Task<Void, any Error> {
                var service = PeriodicHistorySync(
                    syncs: syncs,
                    interval: .seconds(600),
                    lookback: .seconds(1_800),
                    logger: rig.logger
                )
                service.onTurn = { outcome in
                    if case .failure = outcome { failedTurns.withLock { $0 += 1 } }
                }
                return Task { try await service.run() }
            }
            var service = startService()
            try await clock.waitForSleepers(syncs.count)
            var elapsed: TimeInterval = 0
            // Kills, as turns start (the task cancelled mid-turn, as a SIGKILL ends a process with nothing more
            // recorded), and the simulated minutes the service then stays down: over two intervals.
            let kills: [TimeInterval: TimeInterval] = [40 * minute: 25 * minute, 125 * minute: 25 * minute]
            while elapsed < 190 * minute {
                clock.advance(by: 5 * minute)
                elapsed += 5 * minute
                if let pause = kills[elapsed] {
                    service.cancel()
                    _ = await service.result
                    clock.advance(by: pause)
                    elapsed += pause
                    service = startService()
                }
                try await clock.waitForSleepers(syncs.count)
            }
            service.cancel()
            _ = await service.result
            #expect(failedTurns.withLock { $0 } >= 2, "the outage failed turns in both environments")

            let payloadsOnTopic = Set(try await rig.rawMessages().compactMap(\.signedPayload))
            for (environment, items) in [(AppStoreEnvironment.sandbox, sandbox), (.production, production)] {
                let ledger = try await rig.ledger(environment)
                #expect(ledger.entries.map(\.state) == [.covered], "\(environment): \(ledger.entries)")
                let covered = try #require(ledger.entries.first?.range)
                #expect(covered.lowerBound == start.addingTimeInterval(-35 * minute), "the first turn's lookback")
                #expect(covered.upperBound >= start.addingTimeInterval(175 * minute), "\(environment): \(covered)")
                let sent = items.filter { covered.contains($0.sentAt) }.map(\.signedPayload)
                #expect(sent.count == items.count, "every item lies in the covered span")
                #expect(Set(sent).isSubset(of: payloadsOnTopic), "\(environment): every notification at least once")
            }
        }
    }
}
