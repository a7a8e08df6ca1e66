/// Why a history sync or an App Store Server API call failed: a code to branch on, what was being done, and the
/// details (never the API key).
package struct HistorySyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable identifier.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `UNAUTHORIZED`.
        package var description: String { rawValue }

        /// The settings are incomplete or wrong (a missing key id, an unreadable .p8 key).
        case invalidConfiguration = "INVALID_CONFIGURATION"
        /// Apple answered 401: the key, key id, issuer id or bundle id is not accepted.
        case unauthorized = "UNAUTHORIZED"
        /// Apple refused the request (4xx other than 401 and 429): the context names Apple's error code.
        case rejected = "REJECTED"
        /// Apple no longer keeps the window's start (400 StartDateTooFarInPastError, 4000012: over 180 days ago in
        /// production, 30 in the sandbox): that range is gone, and asking again cannot bring it back.
        case rangeGone = "RANGE_GONE"
        /// Apple or the network kept failing (5xx, 429, timeouts) past the retry budget.
        case unavailable = "UNAVAILABLE"
        /// Apple answered something that is not a notification history page.
        case malformedResponse = "MALFORMED_RESPONSE"
        /// The raw topic did not take a page's notifications.
        case kafka = "KAFKA"
        /// The checkpoint could not be read or saved.
        case store = "STORE"
        /// The task was cancelled (a graceful shutdown) while a request was in flight or waiting to be retried.
        case cancelled = "CANCELLED"
    }

    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation, safe to log.
    package var reason: String
    /// Apple's `errorCode`, when Apple sent one.
    package var appleErrorCode: Int?
    /// The HTTP status, when there was a response.
    package var httpStatus: Int?

    /// Creates an error; keep the API key and customer data out of `reason`.
    package init(_ code: Code, _ reason: String, appleErrorCode: Int? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.reason = reason
        self.appleErrorCode = appleErrorCode
        self.httpStatus = httpStatus
    }

    /// Whether running the same sync again later can succeed (it resumes from its checkpoint).
    package var isRetriable: Bool { [.unavailable, .kafka, .store, .cancelled].contains(code) }

    /// `CODE: reason (HTTP status, Apple error code)`; safe to log.
    package var description: String {
        var text = "\(code): \(reason)"
        if let httpStatus {
            text += " (HTTP \(httpStatus)" + (appleErrorCode.map { ", Apple error \($0)" } ?? "") + ")"
        }
        return text
    }
}
