import NIOCore
import NIOHTTP1
import NIOPosix

/// One keep-alive HTTP/1.1 connection that posts one body at a time and keeps only the answer's status: the load
/// generator's own client.
///
/// The load generator shares the machine with what it measures, so every CPU-second it spends is taken from the
/// pipeline. A general-purpose client (pooling, redirects, per-request state machines, streaming bodies) cost about
/// 0.13 ms of CPU per request here, over half of what the ingress itself spends; this one writes three parts and
/// reads the status line.
final class LoadConnection: Sendable {
    private let channel: any Channel
    private let handler: NIOLoopBound<StatusHandler>

    /// Raised when the connection closed or failed before the answer, or the answer took longer than allowed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private init(channel: any Channel, handler: NIOLoopBound<StatusHandler>) {
        self.channel = channel
        self.handler = handler
    }

    static func connect(host: String, port: Int, timeout: Duration) async throws -> LoadConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(timeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(StatusHandler())
                }
            }
            .connect(host: host, port: port)
            .get()
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(
                try channel.pipeline.syncOperations.handler(type: StatusHandler.self),
                eventLoop: channel.eventLoop
            )
        }.get()
        return LoadConnection(channel: channel, handler: handler)
    }

    var isActive: Bool { channel.isActive }

    /// Posts `body` as `head` and waits for the answer's status; throws if the connection fails or no answer comes
    /// within `timeout` (the connection is then closed).
    func post(_ head: HTTPRequestHead, body: ByteBuffer, timeout: Duration) async throws -> Int {
        let promise = channel.eventLoop.makePromise(of: Int.self)
        let (channel, handler) = (self.channel, self.handler)
        channel.eventLoop.execute {
            handler.value.expect(promise, within: TimeAmount(timeout))
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenFailure { handler.value.fail($0) }
        }
        return try await promise.futureResult.get()
    }

    func close() async {
        try? await channel.close()
    }

    /// Completes the answer awaited, with its status, when its end arrives.
    private final class StatusHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart

        private var pending: EventLoopPromise<Int>?
        private var deadline: Scheduled<Void>?
        private var status = 0
        private var context: ChannelHandlerContext?

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
        }

        func expect(_ promise: EventLoopPromise<Int>, within timeout: TimeAmount) {
            pending = promise
            deadline = context?.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [weak self] in
                self?.fail(Failure(description: "no answer within the timeout"))
            }
            if context?.channel.isActive != true { fail(Failure(description: "the connection is closed")) }
        }

        func fail(_ error: any Error) {
            deadline?.cancel()
            deadline = nil
            if let pending {
                self.pending = nil
                pending.fail(error)
                // What the server still sends for this request would be taken for the next one's answer.
                context?.close(promise: nil)
            }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = Int(head.status.code)
            case .body:
                break
            case .end:
                deadline?.cancel()
                deadline = nil
                let pending = self.pending
                self.pending = nil
                pending?.succeed(status)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            fail(Failure(description: "the connection closed before the answer"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            fail(error)
            context.close(promise: nil)
        }
    }
}
