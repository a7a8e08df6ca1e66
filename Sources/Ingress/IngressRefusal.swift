import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A notification request the ingress answers without storing its body, with a short JSON body
/// (`{"error":{"message":...,"requestID":...}}`, Hummingbird's shape plus the request id) and `X-Request-ID`.
struct IngressRefusal: Error {
    let status: HTTPResponse.Status
    let message: String
    let requestID: String
    /// Extra headers, such as `Retry-After`.
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String, requestID: String, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.message = message
        self.requestID = requestID
        if let retryAfterSeconds {
            headers[.retryAfter] = String(retryAfterSeconds)
        }
    }

    /// The answer: its head (with `Content-Length`) and body.
    func response() -> (head: HTTPResponse, body: ByteBuffer) {
        let object = ["error": ["message": message, "requestID": requestID]]
        let json = (try? JSONEncoder().encode(object)) ?? Data()
        var headers = self.headers
        headers[.contentType] = "application/json"
        headers[.contentLength] = String(json.count)
        headers[.xRequestID] = requestID
        return (HTTPResponse(status: status, headerFields: headers), ByteBuffer(bytes: json))
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xRequestID = HTTPField.Name("X-Request-ID")!
}
