import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import PipelineStatus

/// The ingress's HTTP/1.1 connections: Hummingbird's own setup (its `HTTP1Channel`'s handlers, in its order; the
/// HTTP types codec is ``IngressHTTPCodec``) with a ``NotificationRequestHandler`` after its connection-state
/// handler, so notification requests are answered on the event loop and everything else reaches the router as usual
/// (ADR 0014).
struct IngressChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = AcceptedConnection<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let receiver: NotificationReceiver
    let serverName: String
    let idleTimeout: Duration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            // Hummingbird's limits (HTTP1Channel.Configuration.DecoderConfiguration's defaults).
            let decoder = HTTP1Channel.Configuration.DecoderConfiguration()
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderFieldSize = decoder.maxHeaderFieldSize
            limits.maxHeaderListSize = decoder.maxHeaderListSize
            limits.maxHeaderFieldCount = decoder.maxHeaderFieldCount
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false,
                withErrorHandling: false,
                withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: limits
            )
            try pipeline.addHandler(IngressHTTPCodec())
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger))
            try pipeline.addHandler(NotificationRequestHandler(receiver: receiver, serverName: serverName))
            return Value(
                try NIOAsyncChannel(
                    wrappingChannelSynchronously: channel,
                    configuration: .init(isOutboundHalfClosureEnabled: true)
                )
            )
        }
    }

    func handle(value connection: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: connection.handOver(), logger: logger)
    }
}
