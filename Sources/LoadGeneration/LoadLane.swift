import NIOCore
import NIOHTTP1
import NIOPosix

/// One keep-alive HTTP/1.1 connection of the load generator, driven wholly on its event loop: it takes the next body,
/// waits until it is due (an event-loop timer), writes the request, reads the status, records it and goes on,
/// reconnecting after a failure.
///
/// The load generator shares the machine with what it measures, so every CPU-second it spends is taken from the
/// pipeline. A general-purpose client cost about 0.13 ms of CPU per request here; a lean client awaited from Swift
/// tasks still spent half its time switching threads (a `Task.sleep` timer and a task resumed per request). On the
/// event loop a request is a timer, a write and a read.
package final class LoadLane {
    /// What the lanes of one run share.
    package struct Run: Sendable {
        package var host: String
        package var port: Int
        package var hostHeader: String
        package var v2Path: String
        package var v1Path: String
        package var bodies: [String]
        package var rate: Double?
        package var timeout: Duration
        package var retryDelay: Duration?
        package var start: NIODeadline
        package var next: @Sendable () -> Int
        package var answered: @Sendable (_ status: Int?) -> Void
    }

    private let run: Run
    private let eventLoop: any EventLoop
    private let finished: EventLoopPromise<LoadRun.Lane>
    private var lane = LoadRun.Lane()
    private var channel: (any Channel)?
    /// The request on the wire: its body's index and when its latency counts from.
    private var pending: (index: Int, since: NIODeadline)?
    /// Counts posts, so that a connection or write completing after its post ended (a timeout) is told apart.
    private var attempt = 0
    private var deadline: Scheduled<Void>?

    private init(run: Run, eventLoop: any EventLoop) {
        self.run = run
        self.eventLoop = eventLoop
        self.finished = eventLoop.makePromise()
    }

    /// Starts a lane on `eventLoop`; its future completes with what its requests got once the bodies run out.
    package static func start(_ run: Run, on eventLoop: any EventLoop) -> EventLoopFuture<LoadRun.Lane> {
        eventLoop.flatSubmit {
            let lane = LoadLane(run: run, eventLoop: eventLoop)
            lane.takeNext()
            return lane.finished.futureResult
        }
    }

    private func takeNext() {
        let index = run.next()
        guard index < run.bodies.count else {
            channel?.close(promise: nil)
            channel = nil
            finished.succeed(lane)
            return
        }
        guard let rate = run.rate else { return post(index, since: .now()) }
        let due = run.start + .nanoseconds(Int64(Double(index) / rate * 1e9))
        if due <= .now() { return post(index, since: due) }
        eventLoop.assumeIsolated().scheduleTask(deadline: due) { self.post(index, since: due) }
    }

    /// Posts body `index`, connecting first if need be; latency counts from `since`.
    private func post(_ index: Int, since: NIODeadline) {
        pending = (index, since)
        attempt += 1
        let attempt = attempt
        deadline = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(run.timeout)) {
            self.fail(closing: true)
        }
        if let channel, channel.isActive {
            write(to: channel)
            return
        }
        channel = nil
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(run.timeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(StatusReader(lane: bound.value))
                }
            }
            .connect(host: run.host, port: run.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    // Too late for its post (timed out meanwhile): not adopted, so no connection is left open.
                    guard self.attempt == attempt, self.pending != nil else { return channel.close(promise: nil) }
                    self.channel = channel
                    self.write(to: channel)
                case .failure:
                    if self.attempt == attempt { self.fail(closing: false) }
                }
            }
    }

    private func write(to channel: any Channel) {
        guard let (index, _) = pending else { return }
        let attempt = attempt
        let body = run.bodies[index]
        var head = HTTPRequestHead(
            version: .http1_1,
            method: .POST,
            uri: LoadWorkload.isV2(body) ? run.v2Path : run.v1Path
        )
        head.headers.add(name: "Host", value: run.hostHeader)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: String(body.utf8.count))
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(string: body))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil)).assumeIsolated().whenFailure { _ in
            if self.attempt == attempt { self.fail(closing: true) }
        }
    }

    /// The answer's status arrived with its end.
    fileprivate func answered(_ status: Int) {
        guard pending != nil else { return }
        finish(status: status)
    }

    /// The request got no answer: the connection failed or closed, or the timeout passed.
    fileprivate func fail(closing: Bool) {
        guard pending != nil else { return }
        // What the server still sends for this request would be taken for the next one's answer.
        if closing { channel?.close(promise: nil) }
        channel = nil
        finish(status: nil)
    }

    private func finish(status: Int?) {
        guard let (index, since) = pending else { return }
        pending = nil
        deadline?.cancel()
        deadline = nil
        lane.record(index: index, status: status, microseconds: (NIODeadline.now() - since).nanoseconds / 1_000)
        run.answered(status)
        guard status != 200, let retryDelay = run.retryDelay else { return takeNext() }
        eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(retryDelay)) {
            self.lane.retries += 1
            self.post(index, since: .now())
        }
    }

    /// Reads each answer's status and hands it to the lane at the answer's end.
    private final class StatusReader: ChannelInboundHandler {
        package typealias InboundIn = HTTPClientResponsePart

        private let lane: LoadLane
        private var status = 0

        package init(lane: LoadLane) {
            self.lane = lane
        }

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): status = Int(head.status.code)
            case .body: break
            case .end: lane.answered(status)
            }
        }

        package func channelInactive(context: ChannelHandlerContext) {
            if context.channel === lane.channel { lane.fail(closing: false) }
            context.fireChannelInactive()
        }

        package func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if context.channel === lane.channel { lane.fail(closing: true) }
            context.close(promise: nil)
        }
    }
}
