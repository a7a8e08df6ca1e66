import AppStoreModels
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// The App Store Server API endpoints the reconciler uses, with Apple's retry rules applied: 429 waits until
/// `Retry-After` (milliseconds since 1970), 5xx and network failures back off exponentially with jitter, every
/// request passes the shared rate limiter first. 401 and other refusals are not retried.
package final class AppStoreServerAPIClient: Sendable {
    /// How long to keep trying one request.
    package struct RetryPolicy: Sendable {
        /// Attempts per request for 5xx and network failures (429s do not count: Apple says when to come back).
        package var maximumAttempts = 8
        package var initialBackoff: Duration = .milliseconds(500)
        package var maximumBackoff: Duration = .seconds(60)
        /// Longest wait a `Retry-After` may ask for; beyond it the request fails as unavailable.
        package var maximumRetryAfter: Duration = .seconds(3600)
        /// 429s answered per request before giving up.
        package var maximumRateLimitedAttempts = 20

        package init() {}
    }

    /// What the client did, for progress displays and tests.
    package struct Counts: Sendable, Hashable {
        package var requests = 0
        /// 429 answers waited out.
        package var rateLimited = 0
        /// 5xx answers and network failures retried.
        package var retried = 0
    }

    /// Apple's `errorCode` for an expired pagination token (start the window again).
    package static let paginationTokenExpired = 4_000_017
    /// Apple's `errorCode` for a pagination token it does not know.
    package static let invalidPaginationToken = 4_000_014
    /// Apple's `errorCode` for a `startDate` older than it keeps history (StartDateTooFarInPastError).
    package static let startDateTooFarInPast = 4_000_012

    package let configuration: AppStoreServerAPIConfiguration
    private let httpClient: HTTPClient
    private let rateLimiter: RequestRateLimiter
    private let retryPolicy: RetryPolicy
    private let token: AppStoreServerToken
    private let logger: Logger
    private let counts = Mutex(Counts())

    package init(
        configuration: AppStoreServerAPIConfiguration,
        rateLimiter: RequestRateLimiter,
        retryPolicy: RetryPolicy = RetryPolicy(),
        httpClient: HTTPClient = .shared,
        logger: Logger
    ) {
        self.configuration = configuration
        self.rateLimiter = rateLimiter
        self.retryPolicy = retryPolicy
        self.httpClient = httpClient
        self.logger = logger
        token = AppStoreServerToken(configuration: configuration)
    }

    /// What the client did so far.
    package var requestCounts: Counts { counts.withLock { $0 } }

    /// One page of Get Notification History (`POST /inApps/v1/notifications/history`); `paginationToken` is nil for
    /// the first page of a window.
    package func notificationHistory(
        _ request: NotificationHistoryRequest,
        paginationToken: String?,
        environment: AppStoreEnvironment
    ) async throws(HistorySyncError) -> NotificationHistoryResponse {
        guard let base = configuration.baseURL(for: environment) else {
            throw HistorySyncError(.invalidConfiguration, "Apple keeps no notification history for \(environment)")
        }
        var url = base + "/inApps/v1/notifications/history"
        if let paginationToken {
            let allowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+"))
            url += "?paginationToken=" + (paginationToken.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }
        let body: Data
        do {
            body = try JSONEncoder().encode(request)
        } catch {
            throw HistorySyncError(.invalidConfiguration, "could not encode the history request: \(error)")
        }
        let data = try await send(url: url, body: body)
        do {
            return try JSONDecoder().decode(NotificationHistoryResponse.self, from: data)
        } catch {
            throw HistorySyncError(.malformedResponse, "the notification history page is not what Apple documents")
        }
    }

    /// Sends a POST until it succeeds or fails for good; returns the 2xx body.
    private func send(url: String, body: Data) async throws(HistorySyncError) -> Data {
        var failures = 0
        var rateLimited = 0
        while true {
            await rateLimiter.acquire()
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            // A fresh token for every request, as Apple's documentation asks (signing one with ES256 is cheap).
            request.headers.add(name: "Authorization", value: "Bearer \(try token.make())")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "User-Agent", value: "asnp-history-sync")
            request.body = .bytes(ByteBuffer(bytes: body))
            counts.withLock { $0.requests += 1 }

            let status: Int
            let responseBody: ByteBuffer
            let retryAfter: String?
            do {
                let response = try await httpClient.execute(request, timeout: .init(configuration.requestTimeout))
                status = Int(response.status.code)
                retryAfter = response.headers.first(name: "Retry-After")
                responseBody = try await response.body.collect(upTo: 16 << 20)
            } catch {
                if Task.isCancelled { throw HistorySyncError(.cancelled, "stopped while a request was in flight") }
                failures += 1
                try await backOff(after: failures, reason: "the request failed: \(error)", status: nil)
                continue
            }
            switch status {
            case 200..<300:
                return Data(responseBody.readableBytesView)
            case 429:
                rateLimited += 1
                counts.withLock { $0.rateLimited += 1 }
                try await waitOut(retryAfter: retryAfter, rateLimited: rateLimited)
            case 500...:
                failures += 1
                let apple = Self.appleError(in: responseBody)
                try await backOff(
                    after: failures,
                    reason: "Apple answered \(status)" + (apple.map { " (error \($0.code): \($0.message))" } ?? ""),
                    status: status
                )
            case 401:
                throw HistorySyncError(
                    .unauthorized,
                    "Apple did not accept the API token: check the key id, issuer id, bundle id and .p8 key of "
                        + "\(configuration.bundleID), and that the key is an In-App Purchase key",
                    httpStatus: status
                )
            default:
                let apple = Self.appleError(in: responseBody)
                if apple?.code == Self.startDateTooFarInPast {
                    throw HistorySyncError(
                        .rangeGone,
                        "Apple no longer keeps history from the window's start: \(apple?.message ?? "")",
                        appleErrorCode: apple?.code,
                        httpStatus: status
                    )
                }
                throw HistorySyncError(
                    .rejected,
                    "Apple refused the request: " + (apple.map { "\($0.message)" } ?? "no error details"),
                    appleErrorCode: apple?.code,
                    httpStatus: status
                )
            }
        }
    }

    private func backOff(after failures: Int, reason: String, status: Int?) async throws(HistorySyncError) {
        guard failures < retryPolicy.maximumAttempts else {
            throw HistorySyncError(
                .unavailable,
                "gave up after \(failures) attempts; last: \(reason)",
                httpStatus: status
            )
        }
        counts.withLock { $0.retried += 1 }
        // Full jitter: a random wait up to the exponential bound, so many windows do not retry in step.
        let bound = min(retryPolicy.initialBackoff * (1 << min(failures - 1, 20)), retryPolicy.maximumBackoff)
        let wait = bound * Double.random(in: 0.5...1)
        logger.notice(
            "App Store Server API request failed; trying again",
            metadata: ["reason": "\(reason)", "attempt": "\(failures)", "wait": "\(wait)"]
        )
        try await Self.sleep(wait)
    }

    private func waitOut(retryAfter: String?, rateLimited: Int) async throws(HistorySyncError) {
        guard rateLimited <= retryPolicy.maximumRateLimitedAttempts else {
            throw HistorySyncError(.unavailable, "Apple kept answering 429 (rate limit exceeded)", httpStatus: 429)
        }
        // Retry-After is a time in milliseconds since 1970; without it, wait as for a failure.
        var wait = retryPolicy.initialBackoff * (1 << min(rateLimited - 1, 20))
        if let retryAfter, let milliseconds = Int64(retryAfter.trimmingCharacters(in: .whitespaces)) {
            let seconds = Double(milliseconds) / 1000 - Date().timeIntervalSince1970
            wait = .milliseconds(Int64(max(0, seconds) * 1000))
        }
        guard wait <= retryPolicy.maximumRetryAfter else {
            throw HistorySyncError(.unavailable, "Apple's rate limit asks to wait \(wait)", httpStatus: 429)
        }
        logger.notice("App Store Server API rate limit reached; waiting", metadata: ["wait": "\(wait)"])
        try await Self.sleep(wait)
    }

    /// Waits, unless the task is cancelled or the service group shuts down gracefully meanwhile.
    private static func sleep(_ duration: Duration) async throws(HistorySyncError) {
        do {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
        } catch {
            throw HistorySyncError(.cancelled, "stopped while waiting to retry")
        }
    }

    /// Apple's error body: `{"errorCode": 4000017, "errorMessage": "..."}`.
    static func appleError(in body: ByteBuffer) -> (code: Int, message: String)? {
        struct AppleError: Decodable {
            var errorCode: Int
            var errorMessage: String?
        }
        guard let error = try? JSONDecoder().decode(AppleError.self, from: Data(body.readableBytesView)) else {
            return nil
        }
        return (error.errorCode, error.errorMessage ?? "")
    }
}
