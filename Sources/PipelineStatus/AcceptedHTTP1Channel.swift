import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Hummingbird's `HTTP1Channel` with its connections as ``AcceptedConnection``s, for our servers that need no more
/// than it (the status servers, the tests' stand-in for Apple): a connection accepted just as the server stops (a
/// Kubernetes probe as a pod stops) is closed, where Hummingbird's own channel would stop the process.
package struct AcceptedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    package typealias Value = AcceptedConnection<HTTPRequestPart, HTTPResponsePart>

    private let http1: HTTP1Channel

    package init(responder: @escaping HTTPChannelHandler.Responder) {
        http1 = HTTP1Channel(responder: responder)
    }

    package var responder: HTTPChannelHandler.Responder { http1.responder }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).map { Value($0) }
    }

    package func handle(value connection: Value, logger: Logger) async {
        await http1.handle(value: connection.handOver(), logger: logger)
    }
}
