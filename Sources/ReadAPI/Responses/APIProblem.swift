import HTTPTypes

/// An answer that is not the resource: `application/problem+json` (RFC 9457) with the status, a stable `code` for
/// programs, and a `detail` for people. Every error the API answers is one of these, made here alone.
package struct APIProblem: Error, Sendable, Hashable {
    package var status: HTTPResponse.Status
    /// Stable, machine-readable; Docs/api.md lists every one.
    package var code: String
    package var detail: String
    /// Seconds after which trying again may succeed (`Retry-After`).
    package var retryAfterSeconds: Int?
    /// Extra headers (`WWW-Authenticate`).
    package var headers: HTTPFields = [:]

    package init(
        _ status: HTTPResponse.Status,
        code: String,
        detail: String,
        retryAfterSeconds: Int? = nil,
        headers: HTTPFields = [:]
    ) {
        self.status = status
        self.code = code
        self.detail = detail
        self.retryAfterSeconds = retryAfterSeconds
        self.headers = headers
    }

    /// `type` is `about:blank`: the status says what kind of problem it is, `code` which one (RFC 9457, 4.2.1).
    package var body: [UInt8] {
        var writer = JSONWriter()
        writer.string("type", "about:blank")
        writer.string("title", status.reasonPhrase)
        writer.int("status", status.code)
        writer.string("code", code)
        writer.string("detail", detail)
        return writer.finished()
    }

    /// No key, or one the API does not know: the same answer for both.
    static let unauthenticated = APIProblem(
        .unauthorized,
        code: "unauthenticated",
        detail: "send an API key as `Authorization: Bearer <key>`",
        headers: [.wwwAuthenticate: "Bearer realm=\"asnp\""]
    )

    /// Nothing there for this key: no such id, or one of an app or environment the key may not read.
    static func notFound(_ what: String) -> APIProblem {
        APIProblem(.notFound, code: "not_found", detail: "no \(what) of this app and environment")
    }

    /// A failure trying again will not mend; the log line says what it was.
    static let internalFailure = APIProblem(
        .internalServerError,
        code: "internal",
        detail: "the read failed; the API logged why"
    )

    static func invalidParameter(_ name: String, _ reason: String) -> APIProblem {
        APIProblem(.badRequest, code: "invalid_parameter", detail: "\(name) \(reason)")
    }
}
