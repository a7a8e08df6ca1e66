import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Requests access tokens from an OAuth 2.0 token endpoint by the client-credentials grant (RFC 6749 §4.4), with
/// AsyncHTTPClient: librdkafka's own requester needs libcurl, which Debian's librdkafka 2.0.2 is built without.
struct OAuthTokenClient: Sendable {
    let credentials: KafkaOAuthClientCredentials
    let httpClient: HTTPClient

    /// A client for `credentials`; AsyncHTTPClient's shared client by default, which lives as long as the process.
    init(credentials: KafkaOAuthClientCredentials, httpClient: HTTPClient = .shared) {
        self.credentials = credentials
        self.httpClient = httpClient
    }

    /// Asks for a token; fails within ``KafkaOAuthClientCredentials/requestTimeout``.
    func requestToken() async throws(OAuthTokenError) -> OAuthToken {
        let body: ByteBuffer
        let status: HTTPResponseStatus
        do {
            let response = try await httpClient.execute(request, timeout: timeout)
            status = response.status
            body = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw OAuthTokenError(
                code: .unreachable,
                reason: "no answer from the token endpoint \(credentials.tokenEndpoint) (\(error))"
            )
        }
        let data = Data(body.readableBytesView)
        switch status.code {
        case 200..<300:
            return try OAuthToken(
                response: data,
                receivedAt: Date(),
                principalClaim: credentials.principalClaim,
                clientID: credentials.clientID
            )
        case 400..<500:
            throw OAuthTokenError(
                code: .refused,
                reason: "the token endpoint \(credentials.tokenEndpoint) refused the request (HTTP \(status.code)"
                    + "\(Self.oauthError(in: data).map { ": \($0)" } ?? ""))"
            )
        default:
            throw OAuthTokenError(
                code: .unavailable,
                reason: "the token endpoint \(credentials.tokenEndpoint) answered HTTP \(status.code)"
            )
        }
    }

    /// The POST: the grant's form, the client authenticated as ``KafkaOAuthClientCredentials/clientAuthentication``
    /// says.
    var request: HTTPClientRequest {
        var form = [("grant_type", "client_credentials")]
        if let scope = credentials.scope { form.append(("scope", scope)) }
        form += credentials.parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var request = HTTPClientRequest(url: credentials.tokenEndpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        if credentials.clientAuthentication == .post {
            form += [("client_id", credentials.clientID), ("client_secret", credentials.clientSecret)]
        } else {
            // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded.
            let pair = "\(Self.formEncoded(credentials.clientID)):\(Self.formEncoded(credentials.clientSecret))"
            request.headers.add(name: "Authorization", value: "Basic \(Data(pair.utf8).base64EncodedString())")
        }
        let text = form.map { "\(Self.formEncoded($0.0))=\(Self.formEncoded($0.1))" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: text))
        return request
    }

    private var timeout: TimeAmount {
        let (seconds, attoseconds) = credentials.requestTimeout.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// `application/x-www-form-urlencoded`: everything but unreserved characters percent-encoded.
    static func formEncoded(_ text: String) -> String {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        )
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// `error` and `error_description` of an RFC 6749 §5.2 error answer.
    private static func oauthError(in data: Data) -> String? {
        guard let fields = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let error = fields["error"] as? String
        else { return nil }
        return (fields["error_description"] as? String).map { "\(error): \($0)" } ?? error
    }
}
