import Foundation

/// `OAUTHBEARER` tokens that this layer requests itself from an OAuth 2.0 token endpoint with the client-credentials
/// grant (RFC 6749 §4.4) and hands to librdkafka through its token-refresh callback, for every client made from the
/// configuration (producers, consumers, admin clients): Confluent Cloud identity pools, Strimzi with Keycloak, any
/// broker that validates an identity provider's tokens.
///
/// librdkafka's own client (`sasl.oauthbearer.method=oidc`) needs libcurl, which Debian's 2.0.2 is built without.
/// librdkafka asks for a new token at 80% of the current one's lifetime, and every 10 s after a failed request.
package struct KafkaOAuthClientCredentials: Sendable, Hashable {
    /// The identity provider's token endpoint, `https://...` (`http://` only for a local stand-in).
    package var tokenEndpoint: String
    /// The client's id at the identity provider.
    package var clientID: String
    /// The client's secret; never printed (see ``KafkaClusterConfiguration/description``).
    package var clientSecret: String
    /// The `scope` of the request, when the provider needs one (`api://.../.default` for Microsoft Entra ID).
    package var scope: String?
    /// Further form parameters of the token request, for example `audience` (Auth0, Okta custom servers) or
    /// `resource`. The grant's own parameters (`grant_type`, `scope`, `client_id`, `client_secret`) are refused here.
    package var parameters: [String: String] = [:]
    /// SASL extensions sent to the broker beside the token (RFC 7628 §3.1): Confluent Cloud's `logicalCluster` and
    /// `identityPoolId`. Keys are letters only; `auth` is reserved.
    package var extensions: [String: String] = [:]
    /// The claim of a JWT access token that names the principal librdkafka reports (default `sub`). The broker reads
    /// the principal from the token itself; a token without the claim (or not a JWT) is reported as ``clientID``.
    package var principalClaim = "sub"
    /// How the client authenticates to the token endpoint. Default: HTTP Basic, which RFC 6749 §2.3.1 requires every
    /// provider to support.
    package var clientAuthentication = ClientAuthentication.basic
    /// The longest one token request may take, connecting included; a request still unanswered then fails and
    /// librdkafka asks again 10 s later. Default 10 s.
    package var requestTimeout: Duration = .seconds(10)

    /// Credentials for `clientID` at `tokenEndpoint`, with the defaults above.
    package init(tokenEndpoint: String, clientID: String, clientSecret: String, scope: String? = nil) {
        self.tokenEndpoint = tokenEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
    }

    /// How the client id and secret reach the token endpoint (RFC 6749 §2.3.1).
    package struct ClientAuthentication: RawRepresentable, Sendable, Hashable {
        /// The method's name as OpenID Connect's `token_endpoint_auth_method` gives it.
        package let rawValue: String
        /// A method from its OpenID Connect name.
        package init(rawValue: String) { self.rawValue = rawValue }

        /// `client_secret_basic`: an `Authorization: Basic` header.
        package static let basic = ClientAuthentication(rawValue: "client_secret_basic")
        /// `client_secret_post`: `client_id` and `client_secret` in the form body.
        package static let post = ClientAuthentication(rawValue: "client_secret_post")
    }

    /// The form parameters the grant sets itself; ``parameters`` may not override them.
    static let grantParameters: Set<String> = ["grant_type", "scope", "client_id", "client_secret"]

    /// Checks what librdkafka and the token request would otherwise refuse later, at every refresh.
    func validate() throws(KafkaError) {
        guard let url = URL(string: tokenEndpoint), let scheme = url.scheme?.lowercased(),
            scheme == "https" || scheme == "http", url.host?.isEmpty == false
        else {
            throw .invalidConfiguration("the OAuth token endpoint '\(tokenEndpoint)' is not an http(s) URL")
        }
        guard !clientID.isEmpty, !clientSecret.isEmpty else {
            throw .invalidConfiguration("OAuth client credentials need a client id and a client secret")
        }
        guard [ClientAuthentication.basic, .post].contains(clientAuthentication) else {
            throw .invalidConfiguration(
                "OAuth client authentication '\(clientAuthentication.rawValue)' is not client_secret_basic or "
                    + "client_secret_post"
            )
        }
        guard requestTimeout > .zero else { throw .invalidConfiguration("the OAuth request timeout must be positive") }
        guard !principalClaim.isEmpty else { throw .invalidConfiguration("the OAuth principal claim is empty") }
        if let reserved = parameters.keys.sorted().first(where: { Self.grantParameters.contains($0) }) {
            throw .invalidConfiguration("the OAuth request parameter '\(reserved)' is set by the grant itself")
        }
        for (key, value) in extensions.sorted(by: { $0.key < $1.key }) {
            // RFC 7628 §3.1, as librdkafka checks it when the token is set:
            // key = 1*ALPHA, value = *(VCHAR / SP / HTAB / CR / LF).
            guard !key.isEmpty, key != "auth",
                key.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) })
            else {
                throw .invalidConfiguration("the SASL extension '\(key)' is not a name of letters other than 'auth'")
            }
            let allowed = { (scalar: Unicode.Scalar) in
                (0x20...0x7E).contains(scalar.value) || "\t\r\n".unicodeScalars.contains(scalar)
            }
            guard value.unicodeScalars.allSatisfy(allowed) else {
                throw .invalidConfiguration("the SASL extension '\(key)' has characters RFC 7628 does not allow")
            }
        }
    }
}
