import AppStoreModels
import KafkaClient
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import ServiceLifecycle
import Tracing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Pulls one app's notification history in one environment from Apple, page by page, and feeds every
/// `signedPayload` into the raw topic as a V2 body, exactly as the ingress would have (headers with source
/// `history`); the workers verify and deduplicate it like any other body, so feeding a notification twice is harmless.
///
/// Every sync works from the app's **coverage ledger** (``HistoryLedger``, in `history_ledger`): it resumes the
/// ranges in progress at their saved page, fetches the parts of the window no range holds, oldest first and at most
/// ``Configuration/rangeLimit`` at a time, and records what Apple no longer keeps as lost. After each page's notifications are
/// acknowledged by Kafka, the page is recorded in the ledger: a sync stopped at any point, however it stopped,
/// resumes at the page it had not finished. A periodic turn also takes a second look at the last ``Configuration/secondLook`` it
/// covered, since Apple may list a notification hours after it was sent.
package struct HistorySync: Sendable {
    package let client: AppStoreServerAPIClient
    package let environment: AppStoreEnvironment
    package let producer: KafkaProducer
    package let store: NotificationStore
    /// The app's name in the pipeline (the `asnp-app` header the workers pick the policy by).
    package let appName: String
    package let rawTopic: String
    package let logger: Logger
    /// Pages, notifications, ranges and failed deliveries, labelled with the app and environment.
    package let metrics: HistorySyncMetrics
    /// The clock, the range sizes and the margins (``Configuration``).
    package let configuration: Configuration
    /// Records a span per sync and per page, and sends each page's notifications in its trace; nil for no tracing.
    package let tracer: (any Tracer)?

    package init(
        client: AppStoreServerAPIClient,
        environment: AppStoreEnvironment,
        producer: KafkaProducer,
        store: NotificationStore,
        appName: String,
        rawTopic: String,
        metrics: HistorySyncMetrics? = nil,
        configuration: Configuration = Configuration(),
        tracer: (any Tracer)? = nil,
        logger: Logger
    ) {
        self.configuration = configuration
        self.tracer = tracer
        self.client = client
        self.environment = environment
        self.producer = producer
        self.store = store
        self.appName = appName
        self.rawTopic = rawTopic
        self.metrics = metrics ?? HistorySyncMetrics(app: appName, environment: environment)
        var logger = logger
        logger[metadataKey: "history.app"] = "\(appName)"
        logger[metadataKey: "history.environment"] = "\(environment.rawValue)"
        self.logger = logger
    }

    /// The ledger this sync keeps for `filter`.
    package func ledgerKey(_ filter: NotificationHistoryFilter) -> HistoryLedger.Key {
        HistoryLedger.Key(
            bundleID: client.configuration.bundleID,
            environment: environment.rawValue,
            filter: "\(filter)"
        )
    }

    /// Syncs `filter`'s history from `start` to `end` (nil: up to now), working from the ledger: what is covered is
    /// not fetched again (unless `restart`, which forgets the window's ranges first), what is in progress resumes,
    /// what is older than Apple keeps is recorded as lost. With `continuingLedger`, the window starts no later than
    /// the ledger's last unbroken run of ranges, so that nothing between an earlier sync and this one is left out.
    /// With `lookingAgain`, once the window is complete, the parts of the last ``Configuration/secondLook`` before the window's end
    /// that were covered before this sync began are asked again (``lookAgain(at:key:filter:progress:logger:)``).
    ///
    /// Stops after the current page when the task is cancelled or the service group shuts down gracefully (the ledger
    /// keeps what was done). A failure is noted on its range in the ledger before it is thrown.
    package func sync(
        from start: Date,
        to end: Date? = nil,
        filter: NotificationHistoryFilter = .none,
        restart: Bool = false,
        continuingLedger: Bool = false,
        lookingAgain: Bool = false,
        progress report: @Sendable (HistorySyncProgress) -> Void = { _ in }
    ) async throws(HistorySyncError) -> HistorySyncProgress {
        let key = ledgerKey(filter)
        let now = configuration.clock.now()
        let latestEnd = now.addingTimeInterval(-Self.seconds(configuration.settleTime)).wholeMilliseconds
        var windowStart = start.wholeMilliseconds
        if continuingLedger, let runStart = try await ledger(key).lastRunStart {
            windowStart = min(windowStart, runStart)
        }
        let window = windowStart..<max(windowStart, min(end?.wholeMilliseconds ?? latestEnd, latestEnd))
        var progress = HistorySyncProgress(key: key, window: window)
        let countsBefore = client.requestCounts
        var logger = logger
        logger[metadataKey: "history.window"] = "\(key) \(Self.text(window))"
        let span = startSyncSpan(window: window, periodic: lookingAgain)
        do throws(HistorySyncError) {
            if restart {
                try await record(key) { $0.forget(window) }
            }
            // Read before this sync covers more: what it covers itself it has just asked.
            let secondLookStart = window.upperBound.addingTimeInterval(-Self.seconds(configuration.secondLook))
            var lookAgainAt: [Range<Date>] = []
            if lookingAgain {
                // Never older than Apple keeps (a second look longer than the sandbox's 30 days).
                let oldest = max(
                    secondLookStart,
                    oldestFetchable(now: now, margin: configuration.startDateMargin) ?? secondLookStart
                )
                lookAgainAt = try await ledger(key).covered(in: min(oldest, window.upperBound)..<window.upperBound)
            }
            try await recordLostBeforeLimit(window, key: key, now: now, progress: &progress, logger: logger)

            // One range at a time, oldest first: the ledger is read again for each, so that a range another
            // reconciler finished meanwhile is not fetched twice.
            var previous: HistoryLedger.Entry?
            while !Task.isCancelled, !Task.isShuttingDownGracefully {
                let ledger = try await ledger(key)
                guard let next = Self.nextRange(in: ledger, window: window, limit: configuration.rangeLimit) else {
                    progress.isComplete = true
                    break
                }
                // A range fetched to its end and still to fetch means the ledger did not keep what was recorded.
                guard next.range != previous?.range || next.paginationToken != previous?.paginationToken else {
                    throw HistorySyncError(.store, "the history ledger did not keep the range \(Self.text(next.range))")
                }
                previous = next
                if next.paginationToken != nil { progress.resumedRanges += 1 }
                let finished = try await fetch(
                    next,
                    key: key,
                    filter: filter,
                    progress: &progress,
                    in: span,
                    logger: logger
                ) {
                    Self.updateRequests(&$0, client: client, before: countsBefore)
                    report($0)
                }
                guard finished else { break }
            }
            if progress.isComplete, !lookAgainAt.isEmpty {
                progress.isComplete = try await lookAgain(
                    at: lookAgainAt,
                    key: key,
                    filter: filter,
                    progress: &progress,
                    in: span,
                    logger: logger
                )
            }
            if progress.isComplete {
                // A notification is listed after it is sent, so what was listed before the second look's reach (less
                // the margin for Apple's clock) was sent before it too: no second look needs it.
                let cutoff = secondLookStart.addingTimeInterval(-Self.seconds(configuration.startDateMargin))
                do {
                    try await store.deleteHistoryListed(key: key, listedBefore: cutoff)
                } catch {
                    throw HistorySyncError(.store, "forgetting old listed notifications: \(error)")
                }
                logger.info(
                    "History window synced",
                    metadata: [
                        "history.pages": "\(progress.pages)", "history.notifications": "\(progress.notifications)",
                        "history.lostRanges": "\(progress.lostRanges.count)",
                        "history.secondLookNotifications": "\(progress.secondLookNotifications)",
                    ]
                )
            }
            Self.updateRequests(&progress, client: client, before: countsBefore)
            span?.attributes["asnp.history.pages"] = progress.pages + progress.secondLookPages
            span?.attributes["asnp.history.notifications"] = progress.notifications
            Self.end(span)
            return progress
        } catch {
            Self.end(span, failing: error)
            throw error
        }
    }

    /// The next range to fetch within `window`: the earliest of the ranges in progress and the gaps (a gap cut to
    /// `limit`), or nil when the window is wholly covered or lost.
    static func nextRange(in ledger: HistoryLedger, window: Range<Date>, limit: Duration) -> HistoryLedger.Entry? {
        let resumable = ledger.inProgress(overlapping: window).first
        let gap = ledger.gaps(in: window).first.map { gap in
            HistoryLedger.Entry(
                start: gap.lowerBound,
                end: min(gap.upperBound, gap.lowerBound.addingTimeInterval(seconds(limit)).wholeMilliseconds),
                state: .inProgress
            )
        }
        switch (resumable, gap) {
        case (let resumable?, let gap?): return gap.start < resumable.start ? gap : resumable
        case (let resumable?, nil): return resumable
        case (nil, let gap): return gap
        }
    }

    /// Records as lost the parts of `window` neither covered nor lost that lie before the oldest start Apple accepts.
    private func recordLostBeforeLimit(
        _ window: Range<Date>,
        key: HistoryLedger.Key,
        now: Date,
        progress: inout HistorySyncProgress,
        logger: Logger
    ) async throws(HistorySyncError) {
        guard let oldest = oldestFetchable(now: now, margin: configuration.startDateMargin), window.lowerBound < oldest
        else {
            return
        }
        let gone = window.lowerBound..<min(oldest.wholeMilliseconds, window.upperBound)
        let newlyLost = try await ledger(key).unsettled(in: gone)
        guard !newlyLost.isEmpty else { return }
        try await recordLost(
            newlyLost,
            key: key,
            progress: &progress,
            logger: logger,
            "Part of the history window is older than Apple keeps; recorded as lost",
            metadata: ["history.oldestFetchable": "\(oldest)"]
        )
    }

    /// Records `ranges` in the ledger as lost (older than Apple keeps), counts them and says so.
    private func recordLost(
        _ ranges: [Range<Date>],
        key: HistoryLedger.Key,
        progress: inout HistorySyncProgress,
        logger: Logger,
        _ message: Logger.Message,
        metadata: Logger.Metadata = [:]
    ) async throws(HistorySyncError) {
        let note = lostNote
        try await record(key) { ledger in
            for range in ranges {
                ledger.record(
                    HistoryLedger.Entry(start: range.lowerBound, end: range.upperBound, state: .lost, note: note)
                )
            }
        }
        progress.lostRanges += ranges
        for _ in ranges { metrics.countRange(lost: true) }
        logger.notice(message, metadata: metadata.merging(["history.lost": "\(ranges.map(Self.text))"]) { $1 })
    }

    /// Why a range is lost, for the ledger.
    private var lostNote: String {
        let days = NotificationHistoryRequest.historyRetention(in: environment).map { $0.components.seconds / 86_400 }
        return "older than Apple keeps (\(days ?? 0) days in \(environment.rawValue))"
    }

    /// The oldest start Apple accepts now, moved `margin` inside its limit; nil where Apple keeps no limit.
    private func oldestFetchable(now: Date, margin: Duration) -> Date? {
        NotificationHistoryRequest.historyRetention(in: environment).map {
            now.addingTimeInterval(-Self.seconds($0) + Self.seconds(margin))
        }
    }

    /// Fetches `range` from its saved page (or its first) to its last, recording each page; returns false when it
    /// stopped early for a shutdown, true when the range is covered, or when part of it turned out lost (the
    /// caller goes on with the rest).
    private func fetch(
        _ range: HistoryLedger.Entry,
        key: HistoryLedger.Key,
        filter: NotificationHistoryFilter,
        progress: inout HistorySyncProgress,
        in sync: (any Span)?,
        logger: Logger,
        report: (inout HistorySyncProgress) -> Void
    ) async throws(HistorySyncError) -> Bool {
        let request = NotificationHistoryRequest(range.range, filter: filter)
        var entry = range
        var restarts = 0
        // A range a later second look may reach: what its pages list is recorded, so that the second look can tell
        // what Apple listed late.
        let mayLookAgain =
            configuration.secondLook > .zero
            && entry.end
                > configuration.clock.now().addingTimeInterval(
                    -Self.seconds(configuration.settleTime) - Self.seconds(configuration.secondLook)
                )
        if entry.paginationToken != nil {
            logger.info("Resuming a history range", metadata: ["history.range": "\(Self.text(entry.range))"])
        }
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let pageSpan = startPageSpan(range: entry.range, secondLook: false, in: sync)
            var pageFailure: HistorySyncError?
            defer { Self.end(pageSpan, failing: pageFailure) }
            let page: NotificationHistoryResponse
            do {
                page = try await client.notificationHistory(
                    request,
                    paginationToken: entry.paginationToken,
                    environment: environment
                )
            } catch {
                pageFailure = error
                switch PageFailure(error, resuming: entry.paginationToken != nil) {
                case .stop:
                    pageFailure = nil
                    return false
                case .restartRange:
                    restarts += 1
                    progress.restarts += 1
                    guard restarts <= configuration.maximumRestarts else {
                        throw await noted(error, on: entry, key: key)
                    }
                    logger.notice(
                        "Pagination token expired or unknown to Apple; starting the range again",
                        metadata: [
                            "apple.error": "\(error.appleErrorCode ?? 0)", "history.range": "\(Self.text(entry.range))",
                        ]
                    )
                    entry.paginationToken = nil
                    entry.pages = 0
                    entry.notifications = 0
                    let restarted = entry
                    try await record(key) { $0.record(restarted) }
                    continue
                case .rangeGone:
                    // Apple's limit lies later than this clock reckons: what lies before the limit reckoned with
                    // twice the margin is gone; the rest is asked again from its first page.
                    let limit =
                        oldestFetchable(now: configuration.clock.now(), margin: configuration.startDateMargin * 2)
                        ?? entry.start
                    guard limit > entry.start else { throw await noted(error, on: entry, key: key) }
                    try await recordLost(
                        [entry.start..<min(limit.wholeMilliseconds, entry.end)],
                        key: key,
                        progress: &progress,
                        logger: logger,
                        "Apple no longer keeps the start of a history range; recorded as lost"
                    )
                    return true
                case .fail:
                    throw await noted(error, on: entry, key: key)
                }
            }
            do throws(HistorySyncError) {
                entry = try await apply(
                    page,
                    to: entry,
                    key: key,
                    listing: mayLookAgain,
                    progress: &progress,
                    in: pageSpan
                )
            } catch {
                pageFailure = error
                throw error
            }
            report(&progress)
            if entry.state == .covered { return true }
        }
        return false
    }

    /// Applies a page of `range`: feeds its notifications to the raw topic, then records in the ledger the page (its
    /// token, or the range covered), its failed deliveries and, when `listing`, the notifications it listed (for a
    /// later second look); counts it in `progress` and the metrics. Returns the range as recorded. A failure is noted
    /// on the range before it is thrown.
    private func apply(
        _ page: NotificationHistoryResponse,
        to range: HistoryLedger.Entry,
        key: HistoryLedger.Key,
        listing: Bool,
        progress: inout HistorySyncProgress,
        in span: (any Span)?
    ) async throws(HistorySyncError) -> HistoryLedger.Entry {
        var entry = range
        let items = page.notificationHistory ?? []
        let payloads = items.compactMap(\.signedPayload)
        span?.attributes["asnp.history.notifications"] = payloads.count
        do throws(HistorySyncError) {
            try await feed(payloads, in: span)
        } catch {
            throw await noted(error, on: entry, key: key)
        }
        let deliveries = failedDeliveries(in: items)
        entry.pages += 1
        entry.notifications += payloads.count
        entry.note = nil
        entry.updatedAt = Date()
        if page.hasMore == true {
            guard let token = page.paginationToken, !token.isEmpty else {
                let error = HistorySyncError(.malformedResponse, "Apple said there is more history but sent no token")
                throw await noted(error, on: entry, key: key)
            }
            entry.paginationToken = token
        } else {
            entry.paginationToken = nil
            entry.state = .covered
        }
        let saved = entry
        let listed = listing ? payloads.compactMap(Self.notificationUUID(inSignedPayload:)) : []
        let ledger = try await record(key, deliveries: deliveries, listed: listed) { $0.record(saved) }

        progress.pages += 1
        progress.notifications += payloads.count
        progress.skippedItems += items.count - payloads.count
        var failedByResult: [String: Int] = [:]
        for delivery in deliveries { failedByResult[delivery.lastResult, default: 0] += 1 }
        progress.failedDeliveries.merge(failedByResult, uniquingKeysWith: +)
        metrics.countPage(notifications: payloads.count)
        metrics.countFailedDeliveries(failedByResult)
        if key.filter.isEmpty { metrics.show(ledger) }
        if entry.state == .covered {
            progress.coveredRanges.append(entry.range)
            metrics.countRange(lost: false)
        }
        return entry
    }

    /// Asks Apple again for `ranges`, which earlier syncs covered, at most ``Configuration/rangeLimit`` at a time. What Apple lists
    /// now that no earlier request of this ledger listed (`history_listed` does not hold it) goes to the raw topic and
    /// is counted, with its failed deliveries; the rest was put there before and is skipped. The ledger is not
    /// changed: the ranges stay covered, and a second look stopped or failed is simply taken again by the next turn.
    /// Returns false when it stopped early for a shutdown.
    private func lookAgain(
        at ranges: [Range<Date>],
        key: HistoryLedger.Key,
        filter: NotificationHistoryFilter,
        progress: inout HistorySyncProgress,
        in sync: (any Span)?,
        logger: Logger
    ) async throws(HistorySyncError) -> Bool {
        let limit = Self.seconds(configuration.rangeLimit)
        let pieces = ranges.flatMap { range in
            stride(from: 0, to: range.upperBound.timeIntervalSince(range.lowerBound), by: limit).map { offset in
                let start = range.lowerBound.addingTimeInterval(offset).wholeMilliseconds
                return start..<min(range.upperBound, start.addingTimeInterval(limit).wholeMilliseconds)
            }
        }
        for piece in pieces {
            let request = NotificationHistoryRequest(piece, filter: filter)
            var paginationToken: String?
            var restarts = 0
            while true {
                guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return false }
                let pageSpan = startPageSpan(range: piece, secondLook: true, in: sync)
                var pageFailure: HistorySyncError?
                defer { Self.end(pageSpan, failing: pageFailure) }
                let page: NotificationHistoryResponse
                do {
                    page = try await client.notificationHistory(
                        request,
                        paginationToken: paginationToken,
                        environment: environment
                    )
                } catch {
                    pageFailure = error
                    // A second look notes nothing in the ledger: any other failure ends it, and the next turn looks again.
                    switch PageFailure(error, resuming: paginationToken != nil) {
                    case .stop:
                        pageFailure = nil
                        return false
                    case .restartRange where paginationToken != nil:
                        restarts += 1
                        progress.restarts += 1
                        guard restarts <= configuration.maximumRestarts else { throw error }
                        paginationToken = nil
                        continue
                    case .restartRange, .rangeGone, .fail:
                        throw error
                    }
                }
                let items = page.notificationHistory ?? []
                // A payload without a notificationUUID cannot be told apart from one fed before: the first look fed it.
                let named = items.compactMap { item -> (item: NotificationHistoryResponseItem, uuid: UUID)? in
                    item.signedPayload.flatMap(Self.notificationUUID(inSignedPayload:)).map { (item, $0) }
                }
                let unlisted: Set<UUID>
                do {
                    unlisted = try await store.historyNotListed(named.map(\.uuid), key: key)
                } catch {
                    throw HistorySyncError(.store, "reading the notifications the history listed: \(error)")
                }
                let late = named.filter { unlisted.contains($0.uuid) }
                pageSpan?.attributes["asnp.history.notifications"] = late.count
                do throws(HistorySyncError) {
                    try await feed(late.compactMap(\.item.signedPayload), in: pageSpan)
                } catch {
                    pageFailure = error
                    throw error
                }
                let deliveries = failedDeliveries(in: late.map(\.item))
                let found: Int
                do {
                    found = try await store.recordHistoryListed(
                        late.map(\.uuid),
                        key: key,
                        at: configuration.clock.now(),
                        deliveries: deliveries
                    )
                } catch {
                    throw HistorySyncError(.store, "recording the notifications the history listed: \(error)")
                }
                var failedByResult: [String: Int] = [:]
                for delivery in deliveries { failedByResult[delivery.lastResult, default: 0] += 1 }
                progress.secondLookPages += 1
                progress.secondLookNotifications += found
                progress.notifications += late.count
                progress.failedDeliveries.merge(failedByResult, uniquingKeysWith: +)
                metrics.countSecondLookPage(fed: late.count, found: found)
                metrics.countFailedDeliveries(failedByResult)
                if found > 0 {
                    logger.notice(
                        "A second look at a covered range found notifications Apple had not listed before",
                        metadata: ["history.range": "\(Self.text(piece))", "history.found": "\(found)"]
                    )
                }
                guard page.hasMore == true else { break }
                guard let next = page.paginationToken, !next.isEmpty else {
                    throw HistorySyncError(.malformedResponse, "Apple said there is more history but sent no token")
                }
                paginationToken = next
            }
        }
        return true
    }

    /// Notes `error` on `entry` in the ledger (so `asnp history status` shows why a range is stuck) and returns it;
    /// a failure to note it is logged, and the original error still thrown.
    private func noted(
        _ error: HistorySyncError,
        on entry: HistoryLedger.Entry,
        key: HistoryLedger.Key
    ) async -> HistorySyncError {
        var failed = entry
        failed.state = .inProgress
        failed.note = "\(error)"
        failed.updatedAt = Date()
        let noted = failed
        do {
            try await record(key) { $0.record(noted) }
        } catch {
            logger.warning("Could not note a failed history range in the ledger", metadata: ["error": "\(error)"])
        }
        return error
    }

    /// The notifications of `items` Apple reports a failed delivery attempt for.
    private func failedDeliveries(in items: [NotificationHistoryResponseItem]) -> [HistoryDelivery] {
        items.compactMap { item -> HistoryDelivery? in
            let attempts = item.sendAttempts ?? []
            guard attempts.contains(where: { $0.sendAttemptResult != .success }),
                let payload = item.signedPayload,
                let uuid = Self.notificationUUID(inSignedPayload: payload)
            else { return nil }
            let last = attempts.max { ($0.attemptDate ?? .min) < ($1.attemptDate ?? .min) }
            return HistoryDelivery(
                bundleID: client.configuration.bundleID,
                environment: environment.rawValue,
                notificationUUID: uuid,
                lastAttemptAt: last?.attemptDate.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                lastResult: last?.sendAttemptResult?.rawValue ?? "UNKNOWN",
                attempts: attempts.count,
                everSucceeded: attempts.contains { $0.sendAttemptResult == .success }
            )
        }
    }

    /// The `notificationUUID` of a signed payload, read without verifying it (the workers verify the notification;
    /// this only names it in `history_deliveries`).
    static func notificationUUID(inSignedPayload payload: String) -> UUID? {
        struct Claims: Decodable { var notificationUUID: String? }
        let parts = payload.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])),
            let claims = try? JSONDecoder().decode(Claims.self, from: Data(bytes))
        else { return nil }
        return claims.notificationUUID.flatMap(UUID.init(uuidString:))
    }

    /// Puts the bodies on the raw topic, in `span`'s trace; returns once Kafka acknowledged all of them.
    private func feed(_ payloads: [String], in span: (any Span)?) async throws(HistorySyncError) {
        guard !payloads.isEmpty else { return }
        let receivedAt = Date()
        var messages: [KafkaProducerMessage] = []
        messages.reserveCapacity(payloads.count)
        for payload in payloads {
            let body = Self.body(signedPayload: payload)
            let headers = RawNotificationHeaders(
                version: 2,
                environment: environment,
                app: appName,
                receivedAt: receivedAt,
                requestID: UUID().uuidString,
                source: .history
            )
            messages.append(headers.message(body: ByteBuffer(bytes: body), topic: rawTopic))
        }
        inject(span, into: &messages)
        let failures = await producer.send(contentsOf: messages).compactMap { result -> KafkaError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        if let failure = failures.first {
            throw HistorySyncError(
                .kafka,
                "\(failures.count) of \(messages.count) notifications were not acknowledged by the raw topic: \(failure)"
            )
        }
    }

    /// The body Apple posts for a V2 notification: `{"signedPayload":"…"}`.
    static func body(signedPayload: String) -> Data {
        // Encoding a struct of one string cannot fail.
        (try? JSONEncoder().encode(ResponseBodyV2(signedPayload: signedPayload))) ?? Data()
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func text(_ range: Range<Date>) -> String {
        "\(range.lowerBound.formatted(.iso8601))..<\(range.upperBound.formatted(.iso8601))"
    }

    private static func updateRequests(
        _ progress: inout HistorySyncProgress,
        client: AppStoreServerAPIClient,
        before: AppStoreServerAPIClient.Counts
    ) {
        let now = client.requestCounts
        progress.requests = AppStoreServerAPIClient.Counts(
            requests: now.requests - before.requests,
            rateLimited: now.rateLimited - before.rateLimited,
            retried: now.retried - before.retried
        )
    }

    private func ledger(_ key: HistoryLedger.Key) async throws(HistorySyncError) -> HistoryLedger {
        do {
            return try await store.historyLedger(for: key)
        } catch {
            throw HistorySyncError(.store, "reading the history ledger: \(error)")
        }
    }

    @discardableResult
    private func record(
        _ key: HistoryLedger.Key,
        deliveries: [HistoryDelivery] = [],
        listed: [UUID] = [],
        _ change: @escaping @Sendable (inout HistoryLedger) -> Void
    ) async throws(HistorySyncError) -> HistoryLedger {
        do {
            return try await store.updateHistoryLedger(
                key,
                deliveries: deliveries,
                listed: listed,
                listedAt: configuration.clock.now(),
                change
            )
        } catch {
            throw HistorySyncError(.store, "recording in the history ledger: \(error)")
        }
    }
}
