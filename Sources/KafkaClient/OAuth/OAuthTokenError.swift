/// Why no token came from the token endpoint. ``description`` never contains the client secret or a token, so it is
/// safe to log and to hand to librdkafka (`rd_kafka_oauthbearer_set_token_failure`), which reports it as an
/// `_AUTHENTICATION` error.
struct OAuthTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, machine-readable.
    var code: Code
    /// A human explanation, safe to log.
    var reason: String

    /// A token request failure.
    enum Code: String, Hashable, Sendable {
        /// No answer: the endpoint could not be reached, or did not answer within the request timeout.
        case unreachable = "UNREACHABLE"
        /// The endpoint refused the request (HTTP 4xx): wrong credentials, an unknown scope or client.
        case refused = "REFUSED"
        /// The endpoint failed (HTTP 5xx, or another status that is not success).
        case unavailable = "UNAVAILABLE"
        /// The answer is not a bearer token response librdkafka can use (RFC 6749 §5.1).
        case invalidResponse = "INVALID_RESPONSE"
        /// librdkafka refused the token (`rd_kafka_oauthbearer_set_token`: expired, characters it does not allow).
        case rejected = "REJECTED"
    }

    /// `CODE: reason`.
    var description: String { "\(code.rawValue): \(reason)" }
}
