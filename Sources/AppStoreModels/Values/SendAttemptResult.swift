/// The outcome of one attempt to send a notification to your server (`sendAttemptResult`).
///
/// Unknown future values decode without error and keep their raw value.
public struct SendAttemptResult: AppStoreStringValue {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Wraps a raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `SUCCESS`
    public static let success: Self = "SUCCESS"

    /// `TIMED_OUT`
    public static let timedOut: Self = "TIMED_OUT"

    /// `TLS_ISSUE`
    public static let tlsIssue: Self = "TLS_ISSUE"

    /// `CIRCULAR_REDIRECT`
    public static let circularRedirect: Self = "CIRCULAR_REDIRECT"

    /// `NO_RESPONSE`
    public static let noResponse: Self = "NO_RESPONSE"

    /// `SOCKET_ISSUE`
    public static let socketIssue: Self = "SOCKET_ISSUE"

    /// `UNSUPPORTED_CHARSET`
    public static let unsupportedCharset: Self = "UNSUPPORTED_CHARSET"

    /// `INVALID_RESPONSE`
    public static let invalidResponse: Self = "INVALID_RESPONSE"

    /// `PREMATURE_CLOSE`
    public static let prematureClose: Self = "PREMATURE_CLOSE"

    /// `UNSUCCESSFUL_HTTP_RESPONSE_CODE`
    public static let unsuccessfulHTTPResponseCode: Self = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"

    /// `OTHER`
    public static let other: Self = "OTHER"
}
