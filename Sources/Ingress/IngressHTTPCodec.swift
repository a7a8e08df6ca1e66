import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Translates HTTP/1 parts into HTTP types and back, as swift-nio-extras' `HTTP1ToHTTPServerCodec` does (plain
/// HTTP, cookies not split), but for the request target a client sends to a server, `/path?query`, the path is that
/// text itself. The library's conversion parses every target with `URLComponents` to find the path of an absolute
/// one (`http://host/path`): ~1.5% of the ingress's CPU under load, for an answer that for a target starting with
/// `/` is always the target unchanged (a URL scheme starts with a letter). Other targets go through the library's
/// conversion.
package final class IngressHTTPCodec: ChannelDuplexHandler, RemovableChannelHandler, Sendable {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    package init() {}

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            do {
                context.fireChannelRead(wrapInboundOut(.head(try Self.request(head))))
            } catch {
                context.fireErrorCaught(error)
            }
        case .body(let body):
            context.fireChannelRead(wrapInboundOut(.body(body)))
        case .end(let trailers):
            context.fireChannelRead(wrapInboundOut(.end(trailers.map { HTTPFields($0, splitCookie: false) })))
        }
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            context.write(wrapOutboundOut(.head(HTTPResponseHead(response))), promise: promise)
        case .body(let body):
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
        case .end(let trailers):
            context.write(wrapOutboundOut(.end(trailers.map(HTTPHeaders.init))), promise: promise)
        }
    }

    /// The request `head` is, as the library converts it.
    static func request(_ head: HTTPRequestHead) throws -> HTTPRequest {
        guard head.uri.utf8.first == UInt8(ascii: "/") else {
            return try HTTPRequest(head, secure: false, splitCookie: false)
        }
        return HTTPRequest(
            method: try HTTPRequest.Method(head.method),
            scheme: "http",
            authority: head.headers["Host"].first,
            path: head.uri,
            headerFields: HTTPFields(head.headers, splitCookie: false)
        )
    }
}
