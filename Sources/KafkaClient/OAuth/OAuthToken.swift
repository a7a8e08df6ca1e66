import Foundation

/// An access token as librdkafka takes it (`rd_kafka_oauthbearer_set_token`): the token, when it expires and the
/// principal it names. Read from a token endpoint's successful answer (RFC 6749 §5.1).
struct OAuthToken: Sendable, Hashable {
    /// The access token; a secret, never logged.
    var value: String
    /// When it expires, in milliseconds since 1970 (librdkafka's `md_lifetime_ms`).
    var expiresAtMilliseconds: Int64
    /// The principal librdkafka reports (its `md_principal_name`).
    var principal: String

    /// Reads the endpoint's JSON answer, received at `now`. The lifetime is the answer's `expires_in` or else the
    /// token's own `exp` claim (a JWT); the principal is `principalClaim` of a JWT, or else `clientID`.
    init(response body: Data, receivedAt now: Date, principalClaim: String, clientID: String) throws(OAuthTokenError) {
        guard let object = try? JSONSerialization.jsonObject(with: body), let fields = object as? [String: Any] else {
            throw OAuthTokenError(code: .invalidResponse, reason: "the token endpoint's answer is not a JSON object")
        }
        guard let value = fields["access_token"] as? String, !value.isEmpty else {
            throw OAuthTokenError(code: .invalidResponse, reason: "the token endpoint's answer has no access_token")
        }
        // RFC 6749 §7.1: a client must not use a token type it does not understand. Some providers omit it.
        if let type = fields["token_type"] as? String, type.lowercased() != "bearer" {
            throw OAuthTokenError(
                code: .invalidResponse,
                reason: "the token endpoint issued a '\(type)' token, not a bearer token"
            )
        }
        let claims = Self.jwtClaims(of: value)
        // A number, or a string of digits (older Microsoft endpoints).
        if let expiresIn = Self.number(fields["expires_in"]) {
            guard expiresIn > 0, expiresIn.isFinite else {
                throw OAuthTokenError(code: .invalidResponse, reason: "the token endpoint's expires_in is \(expiresIn)")
            }
            expiresAtMilliseconds = Int64((now.timeIntervalSince1970 + expiresIn) * 1_000)
        } else if let expiry = Self.number(claims?["exp"]), expiry.isFinite {
            expiresAtMilliseconds = Int64(expiry * 1_000)
        } else {
            throw OAuthTokenError(
                code: .invalidResponse,
                reason:
                    "the token endpoint's answer has no expires_in and the token no exp claim: its lifetime is unknown"
            )
        }
        self.value = value
        principal = (claims?[principalClaim] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? clientID
    }

    private static func number(_ value: Any?) -> Double? {
        switch value {
        case let number as Int: Double(number)
        case let number as Double: number
        case let text as String: Double(text)
        default: nil
        }
    }

    /// The claims of a JWT (its second, base64url-encoded part), or nil for a token that is not one. The signature is
    /// not checked: the broker does that; the client only reads the expiry and the principal.
    static func jwtClaims(of token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}
