/// The outcome of one attempt to send a notification to your server (`sendAttemptResult`).
///
/// Unknown future values decode without error and keep their raw value.
package struct SendAttemptResult: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    package let rawValue: String

    /// Wraps a raw value, known or not.
    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `SUCCESS`
    package static let success: Self = "SUCCESS"

    /// `TIMED_OUT`
    package static let timedOut: Self = "TIMED_OUT"

    /// `TLS_ISSUE`
    package static let tlsIssue: Self = "TLS_ISSUE"

    /// `CIRCULAR_REDIRECT`
    package static let circularRedirect: Self = "CIRCULAR_REDIRECT"

    /// `NO_RESPONSE`
    package static let noResponse: Self = "NO_RESPONSE"

    /// `SOCKET_ISSUE`
    package static let socketIssue: Self = "SOCKET_ISSUE"

    /// `UNSUPPORTED_CHARSET`
    package static let unsupportedCharset: Self = "UNSUPPORTED_CHARSET"

    /// `INVALID_RESPONSE`
    package static let invalidResponse: Self = "INVALID_RESPONSE"

    /// `PREMATURE_CLOSE`
    package static let prematureClose: Self = "PREMATURE_CLOSE"

    /// `UNSUCCESSFUL_HTTP_RESPONSE_CODE`
    package static let unsuccessfulHTTPResponseCode: Self = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"

    /// `OTHER`
    package static let other: Self = "OTHER"
}
