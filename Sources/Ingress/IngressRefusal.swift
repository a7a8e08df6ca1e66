import HTTPTypes
import Hummingbird
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A notification request the ingress answers without storing its body: thrown by the middleware and the
/// receiver, answered with a short JSON body (`{"error":{"message":...,"requestID":...}}`, Hummingbird's shape
/// plus the request id) and `X-Request-ID`.
struct IngressRefusal: HTTPResponseError {
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

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let object = ["error": ["message": message, "requestID": requestID]]
        let json = (try? JSONEncoder().encode(object)) ?? Data()
        var headers = self.headers
        headers[.contentType] = "application/json"
        headers[.xRequestID] = requestID
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xRequestID = HTTPField.Name("X-Request-ID")!
}
