/// Why a history sync or an App Store Server API call failed: a code to branch on, what was being done, and the
/// details (never the API key).
public struct HistorySyncError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The settings are incomplete or wrong (a missing key id, an unreadable .p8 key).
        public static let invalidConfiguration = Code(rawValue: "INVALID_CONFIGURATION")
        /// Apple answered 401: the key, key id, issuer id or bundle id is not accepted.
        public static let unauthorized = Code(rawValue: "UNAUTHORIZED")
        /// Apple refused the request (4xx other than 401 and 429): the context names Apple's error code.
        public static let rejected = Code(rawValue: "REJECTED")
        /// Apple or the network kept failing (5xx, 429, timeouts) past the retry budget.
        public static let unavailable = Code(rawValue: "UNAVAILABLE")
        /// Apple answered something that is not a notification history page.
        public static let malformedResponse = Code(rawValue: "MALFORMED_RESPONSE")
        /// The raw topic did not take a page's notifications.
        public static let kafka = Code(rawValue: "KAFKA")
        /// The checkpoint could not be read or saved.
        public static let store = Code(rawValue: "STORE")
        /// The task was cancelled (a graceful shutdown) while a request was in flight or waiting to be retried.
        public static let cancelled = Code(rawValue: "CANCELLED")
    }

    public var code: Code
    public var message: String
    /// Apple's `errorCode`, when Apple sent one.
    public var appleErrorCode: Int?
    /// The HTTP status, when there was a response.
    public var httpStatus: Int?

    public init(_ code: Code, _ message: String, appleErrorCode: Int? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.appleErrorCode = appleErrorCode
        self.httpStatus = httpStatus
    }

    /// Whether running the same sync again later can succeed (it resumes from its checkpoint).
    public var isRetriable: Bool { [.unavailable, .kafka, .store, .cancelled].contains(code) }

    public var description: String {
        var text = "\(code): \(message)"
        if let httpStatus {
            text += " (HTTP \(httpStatus)" + (appleErrorCode.map { ", Apple error \($0)" } ?? "") + ")"
        }
        return text
    }
}
