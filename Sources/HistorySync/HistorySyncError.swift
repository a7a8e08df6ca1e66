/// Why a history sync or an App Store Server API call failed: a code to branch on, what was being done, and the
/// details (never the API key).
package struct HistorySyncError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// The settings are incomplete or wrong (a missing key id, an unreadable .p8 key).
        package static let invalidConfiguration = Code(rawValue: "INVALID_CONFIGURATION")
        /// Apple answered 401: the key, key id, issuer id or bundle id is not accepted.
        package static let unauthorized = Code(rawValue: "UNAUTHORIZED")
        /// Apple refused the request (4xx other than 401 and 429): the context names Apple's error code.
        package static let rejected = Code(rawValue: "REJECTED")
        /// Apple or the network kept failing (5xx, 429, timeouts) past the retry budget.
        package static let unavailable = Code(rawValue: "UNAVAILABLE")
        /// Apple answered something that is not a notification history page.
        package static let malformedResponse = Code(rawValue: "MALFORMED_RESPONSE")
        /// The raw topic did not take a page's notifications.
        package static let kafka = Code(rawValue: "KAFKA")
        /// The checkpoint could not be read or saved.
        package static let store = Code(rawValue: "STORE")
        /// The task was cancelled (a graceful shutdown) while a request was in flight or waiting to be retried.
        package static let cancelled = Code(rawValue: "CANCELLED")
    }

    package var code: Code
    package var message: String
    /// Apple's `errorCode`, when Apple sent one.
    package var appleErrorCode: Int?
    /// The HTTP status, when there was a response.
    package var httpStatus: Int?

    package init(_ code: Code, _ message: String, appleErrorCode: Int? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.appleErrorCode = appleErrorCode
        self.httpStatus = httpStatus
    }

    /// Whether running the same sync again later can succeed (it resumes from its checkpoint).
    package var isRetriable: Bool { [.unavailable, .kafka, .store, .cancelled].contains(code) }

    package var description: String {
        var text = "\(code): \(message)"
        if let httpStatus {
            text += " (HTTP \(httpStatus)" + (appleErrorCode.map { ", Apple error \($0)" } ?? "") + ")"
        }
        return text
    }
}
