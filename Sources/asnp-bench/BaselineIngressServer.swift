import AppStoreModels
import Foundation
import HTTPTypes
import Ingress
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTPTypes
import NIOPosix
import PipelineContract
import ServiceLifecycle

/// The baseline of `asnp-bench ingress`: an HTTP server on the stack the ingress answers notifications with
/// (SwiftNIO's HTTP/1 pipeline and the ingress's HTTP types codec, a handler on the event loop; ADR 0014) that does the
/// ingress's work up to the produce — gathers the body within the size limit, peeks the partition key, builds the
/// raw-topic headers and message — and answers 200 without producing. Measured beside the real ingress, it shows
/// what waiting for the broker's acknowledgement costs. Never for serving Apple: nothing is kept.
struct BaselineIngressServer: Service {
    let configuration: IngressConfiguration
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void

    init(configuration: IngressConfiguration, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void) {
        self.configuration = configuration
        self.logger = logger
        self.onListening = onListening
    }

    func run() async throws {
        let maximumBodySize = configuration.maximumBodySize
        let rawTopic = configuration.rawTopic
        let app = configuration.apps[0].name
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                    try channel.pipeline.syncOperations.addHandler(IngressHTTPCodec())
                    try channel.pipeline.syncOperations.addHandler(
                        Handler(maximumBodySize: maximumBodySize, rawTopic: rawTopic, app: app)
                    )
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        await onListening(server.localAddress?.port ?? configuration.port)
        // Until the group's graceful shutdown (or cancellation) ends the run.
        try? await gracefulShutdown()
        try await server.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundOut = HTTPResponsePart

        let maximumBodySize: Int
        let rawTopic: String
        let app: String
        var body: ByteBuffer?

        init(maximumBodySize: Int, rawTopic: String, app: String) {
            self.maximumBodySize = maximumBodySize
            self.rawTopic = rawTopic
            self.app = app
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                let declared = head.headerFields[.contentLength].flatMap(Int.init) ?? 0
                body = context.channel.allocator.buffer(capacity: min(declared, maximumBodySize))
            case .body(var part):
                if (body?.readableBytes ?? 0) + part.readableBytes <= maximumBodySize { body?.writeBuffer(&part) }
            case .end:
                guard let body else { return }
                self.body = nil
                answer(body, context: context)
            }
        }

        private func answer(_ body: ByteBuffer, context: ChannelHandlerContext) {
            let requestID = UUID().uuidString.lowercased()
            var status = HTTPResponse.Status.badRequest
            if let key = PartitionKey.peek(body: Data(buffer: body, byteTransferStrategy: .noCopy), version: 2) {
                let headers = RawNotificationHeaders(
                    version: 2,
                    environment: .sandbox,
                    app: app,
                    receivedAt: Date(),
                    requestID: requestID,
                    source: .ingress
                )
                // Built as the real ingress builds it, and dropped.
                withExtendedLifetime(headers.message(body: body, key: key, topic: rawTopic)) {}
                status = .ok
            }
            var fields = HTTPFields()
            fields[.contentLength] = "0"
            fields[HTTPField.Name("X-Request-ID")!] = requestID
            context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
