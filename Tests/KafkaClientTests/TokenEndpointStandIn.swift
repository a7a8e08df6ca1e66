import AppStoreTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import Synchronization

/// An OAuth 2.0 token endpoint on 127.0.0.1 for the OAUTHBEARER tests: answers client-credentials requests with
/// JWT-shaped bearer tokens of a fixed lifetime, or with 500 while a test makes it fail, and records what it saw.
final class TokenEndpointStandIn: Sendable {
    /// One request as it arrived.
    struct Request: Sendable {
        var form: [String: String]
        var authorization: String?
        var arrivedAt: Date
    }

    /// One token it issued.
    struct Issued: Sendable {
        var token: String
        var expiresAt: Date
    }

    /// The tokens' lifetime (`expires_in`).
    let lifetime: Duration
    /// The `sub` claim of every token.
    let subject = "svc-asnp-test"
    private let state: Mutex<(requests: [Request], issued: [Issued], failing: Bool)>

    init(lifetime: Duration, failing: Bool = false) {
        self.lifetime = lifetime
        state = Mutex(([], [], failing))
    }

    var requests: [Request] { state.withLock { $0.requests } }
    var issued: [Issued] { state.withLock { $0.issued } }

    /// Makes the endpoint answer 500 (true) or issue tokens (false) from the next request on.
    func setFailing(_ failing: Bool) {
        state.withLock { $0.failing = failing }
    }

    /// Serves on a free port of 127.0.0.1 while `body` runs; `body` gets the token endpoint's URL.
    func serve<Result: Sendable>(_ body: (String) async throws -> Result) async throws -> Result {
        let router = Router()
        router.post("/oauth2/token") { request, _ in try await self.answer(request) }
        return try await LoopbackServer.serve(router, label: "token-endpoint-stand-in") { port in
            try await body("http://127.0.0.1:\(port)/oauth2/token")
        }
    }

    private func answer(_ request: Hummingbird.Request) async throws -> Response {
        let body = String(buffer: try await request.body.collect(upTo: 1 << 16))
        var form: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            form[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        let now = Date()
        let expiresAt = now.addingTimeInterval(Double(lifetime.components.seconds))
        let answer: (status: HTTPResponse.Status, json: String) = state.withLock { state in
            state.requests.append(Request(form: form, authorization: request.headers[.authorization], arrivedAt: now))
            guard !state.failing else { return (.internalServerError, #"{"error":"temporarily_unavailable"}"#) }
            let claims =
                #"{"sub":"\#(subject)","exp":\#(Int(expiresAt.timeIntervalSince1970)),"jti":"\#(state.issued.count)"}"#
            let token =
                [#"{"alg":"none","typ":"JWT"}"#, claims].map(Self.base64URL).joined(separator: ".") + ".c2lnbmF0dXJl"
            state.issued.append(Issued(token: token, expiresAt: expiresAt))
            return (
                .ok,
                #"{"access_token":"\#(token)","token_type":"Bearer","expires_in":\#(lifetime.components.seconds)}"#
            )
        }
        return Response(
            status: answer.status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: answer.json))
        )
    }

    private static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
