import AppStoreModels
import KafkaClient
import Logging
import NIOCore
import NotificationStore
import PipelineContract
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Pulls one app's notification history from Apple, page by page, and feeds every `signedPayload` into the raw
/// topic as a V2 body, exactly as the ingress would have (headers with source `history`); the workers verify and
/// deduplicate it like any other body, so feeding a notification twice is harmless.
///
/// After each page's notifications are acknowledged by Kafka, the window's checkpoint (the next pagination token
/// and the counts) is saved in `history_sync`: a sync stopped at any point resumes at the page it had not finished.
package struct HistorySync: Sendable {
    package let client: AppStoreServerAPIClient
    package let producer: KafkaProducer
    package let store: NotificationStore
    /// The app's name in the pipeline (the `asnp-app` header the workers pick the policy by).
    package let appName: String
    package let rawTopic: String
    package let logger: Logger
    /// Times a window may start over after an expired pagination token before the sync gives up.
    package var maximumRestarts = 5
    /// How far inside Apple's history limit (``NotificationHistoryRequest/historyRetention(in:)``) a window's start
    /// is moved when it lies beyond it, so clock skew and a long run do not cross the limit.
    package var startDateMargin: Duration = .seconds(3_600)

    package init(
        client: AppStoreServerAPIClient,
        producer: KafkaProducer,
        store: NotificationStore,
        appName: String,
        rawTopic: String,
        logger: Logger
    ) {
        self.client = client
        self.producer = producer
        self.store = store
        self.appName = appName
        self.rawTopic = rawTopic
        self.logger = logger
    }

    /// Syncs the window and filter of `request` in `environment` to the end, resuming from its checkpoint (or from
    /// the start with `restart`); a window already complete returns at once. Stops after the current page when
    /// the task is cancelled or the service group shuts down gracefully (the checkpoint keeps what was done).
    package func sync(
        _ request: NotificationHistoryRequest,
        environment: AppStoreEnvironment,
        restart: Bool = false,
        progress report: @Sendable (HistorySyncProgress) -> Void = { _ in }
    ) async throws(HistorySyncError) -> HistorySyncProgress {
        let window = HistoryCheckpoint.Window(
            bundleID: client.configuration.bundleID,
            environment: environment.rawValue,
            start: Date(timeIntervalSince1970: Double(request.startDate) / 1000),
            end: Date(timeIntervalSince1970: Double(request.endDate) / 1000),
            filter: request.filterDescription
        )
        let countsBefore = client.requestCounts
        var checkpoint = HistoryCheckpoint(window: window)
        if !restart,
            let saved = try await storeCall({ () async throws(NotificationStoreError) in
                try await store.historyCheckpoint(for: window)
            })
        {
            checkpoint = saved
        }
        var progress = HistorySyncProgress(window: window)
        progress.resumed = checkpoint.pagesFetched > 0
        progress.isComplete = checkpoint.completedAt != nil
        func update() {
            progress.pages = checkpoint.pagesFetched
            progress.notifications = checkpoint.notificationsFetched
            let now = client.requestCounts
            progress.requests = AppStoreServerAPIClient.Counts(
                requests: now.requests - countsBefore.requests,
                rateLimited: now.rateLimited - countsBefore.rateLimited,
                retried: now.retried - countsBefore.retried
            )
        }
        update()
        var logger = logger
        logger[metadataKey: "history.window"] = "\(window)"
        if progress.isComplete {
            logger.info("History window already synced; nothing to do (restart it to sync again)")
            return progress
        }
        // Apple refuses a start older than it keeps history: ask from the oldest start it accepts, and say what
        // part of the window is gone. The checkpoint keeps the window as asked, so a rerun finds it.
        var request = request
        if let retention = NotificationHistoryRequest.historyRetention(in: environment) {
            let oldest = Date().addingTimeInterval(-Self.seconds(retention) + Self.seconds(startDateMargin))
            let oldestMilliseconds = Int64((oldest.timeIntervalSince1970 * 1000).rounded(.up))
            if request.startDate < oldestMilliseconds {
                let skippedTo = min(oldestMilliseconds, request.endDate)
                progress.unfetchableBefore = Date(timeIntervalSince1970: Double(skippedTo) / 1000)
                logger.notice(
                    "The start of the history window is older than Apple keeps; skipping it as no longer fetchable",
                    metadata: [
                        "history.unfetchable": "\(window.start)..<\(progress.unfetchableBefore ?? window.end)",
                        "history.retention": "\(retention)",
                    ]
                )
                guard oldestMilliseconds < request.endDate else {
                    progress.isComplete = true  // Nothing of the window can be fetched any more.
                    return progress
                }
                request.startDate = oldestMilliseconds
            }
        }
        if progress.resumed {
            logger.info("Resuming a history window", metadata: ["history.pages": "\(checkpoint.pagesFetched)"])
        }

        // A graceful shutdown (SIGTERM) lets the page in hand finish: produced and checkpointed, then the loop ends.
        while !progress.isComplete, !Task.isCancelled, !Task.isShuttingDownGracefully {
            let page: NotificationHistoryResponse
            do {
                page = try await client.notificationHistory(
                    request,
                    paginationToken: checkpoint.paginationToken,
                    environment: environment
                )
            } catch  where error.code == .cancelled {
                break  // The checkpoint holds every page produced; the next run resumes there.
            } catch
                where error.appleErrorCode == AppStoreServerAPIClient.paginationTokenExpired
                || (error.appleErrorCode == AppStoreServerAPIClient.invalidPaginationToken
                    && checkpoint.paginationToken != nil)
            {
                // Tokens live for a limited time (a checkpoint resumed days later holds a stale one): start the
                // window again; the workers drop what is fed twice.
                progress.restarts += 1
                guard progress.restarts <= maximumRestarts else { throw error }
                logger.notice(
                    "Pagination token expired or unknown to Apple; starting the window again",
                    metadata: ["apple.error": "\(error.appleErrorCode ?? 0)"]
                )
                checkpoint.paginationToken = nil
                continue
            }
            let items = page.notificationHistory ?? []
            let payloads = items.compactMap(\.signedPayload)
            progress.skippedItems += items.count - payloads.count
            try await feed(payloads, environment: environment)

            checkpoint.pagesFetched += 1
            checkpoint.notificationsFetched += payloads.count
            progress.pagesThisRun += 1
            progress.notificationsThisRun += payloads.count
            if page.hasMore == true {
                guard let token = page.paginationToken, !token.isEmpty else {
                    throw HistorySyncError(.malformedResponse, "Apple said there is more history but sent no token")
                }
                checkpoint.paginationToken = token
            } else {
                checkpoint.paginationToken = nil
                checkpoint.completedAt = Date()
                progress.isComplete = true
            }
            let saved = checkpoint
            try await storeCall { () async throws(NotificationStoreError) in
                try await store.saveHistoryCheckpoint(saved)
            }
            update()
            report(progress)
        }
        if progress.isComplete {
            logger.info(
                "History window synced",
                metadata: ["history.pages": "\(progress.pages)", "history.notifications": "\(progress.notifications)"]
            )
        }
        return progress
    }

    /// Puts the bodies on the raw topic; returns once Kafka acknowledged all of them.
    private func feed(_ payloads: [String], environment: AppStoreEnvironment) async throws(HistorySyncError) {
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

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func storeCall<Result>(
        _ operation: () async throws(NotificationStoreError) -> Result
    ) async throws(HistorySyncError) -> Result {
        do {
            return try await operation()
        } catch {
            throw HistorySyncError(.store, "the history checkpoint: \(error)")
        }
    }
}
