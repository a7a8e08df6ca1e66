import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Tracing

/// One connection's notification requests, answered on its event loop without a task or a thread hop per request
/// (ADR 0014): the head admitted or refused (``NotificationReceiver/admit(_:head:peer:requestID:)``), the body
/// gathered into one buffer, produced, and answered from the delivery report. Every other request goes on to
/// Hummingbird's router (health, metrics, and the answers for routes that do not exist).
///
/// It sits behind Hummingbird's connection-state handler, which therefore sees every request and answer: the idle
/// timeout never closes a connection whose notification waits for the broker, and a graceful shutdown closes each
/// connection once its answer is written. Requests are answered in order: parts that arrive while an earlier request
/// is still being answered wait, and while they wait no more is read from the connection. Reading goes on while a
/// notification waits for the broker with nothing behind it: a sender that waits for each answer (Apple does) then
/// costs no pair of `epoll_ctl` calls per request to stop reading and start again.
final class NotificationRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        case idle
        /// A request for the router: idle again once its end went on (`ended`) and its answer's end was written
        /// (`answered`; it may come first, then the rest of the request still goes on, for the router to drain).
        case passing(ended: Bool, answered: Bool)
        /// An admitted notification's body; `deadline` once it did not come with the head (the sweeper's id).
        case reading(target: NotificationTarget, body: ByteBuffer, contentType: String?, deadline: UInt64?)
        /// A notification answered at its head (refused): the rest of its body is dropped, until the body deadline.
        case draining(deadline: UInt64?)
        /// An admitted notification waiting for the broker.
        case storing
        /// The connection is being closed: nothing more is read or answered.
        case closing
    }

    /// The notification being handled.
    private struct Current {
        let route: String
        let requestID: String
        /// The sender asked for the connection to be closed after the answer.
        let closes: Bool
        /// Holds one of `ingress.maximumConcurrentRequests` places.
        var holdsPlace: Bool
        /// Its span, ended when it is answered or given up (nil when tracing is off).
        var span: (any Span)?
    }

    private let receiver: NotificationReceiver
    private let serverName: String
    private var state = State.idle
    private var current: Current?
    /// Parts that came while an earlier request was still being answered.
    private var waiting = CircularBuffer<HTTPRequestPart>()
    /// A read held back while parts wait: issued once they are handled.
    private var readPending = false
    /// Counts the notifications of this connection: a body deadline names the one it was set for.
    private var requestNumber = 0
    private var context: ChannelHandlerContext?

    init(receiver: NotificationReceiver, serverName: String) {
        self.receiver = receiver
        self.serverName = serverName
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard waiting.isEmpty, !isBusy else {
            waiting.append(part)
            return
        }
        handle(part, context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        armBodyDeadline(context: context)
        context.fireChannelReadComplete()
    }

    /// A body that did not come with its head (all that was read so far) must come by the request timeout, however
    /// slowly it trickles.
    private func armBodyDeadline(context: ChannelHandlerContext) {
        switch state {
        case .reading(let target, let body, let contentType, nil):
            let deadline = addBodyDeadline(context: context)
            state = .reading(target: target, body: body, contentType: contentType, deadline: deadline)
        case .draining(nil):
            state = .draining(deadline: addBodyDeadline(context: context))
        default:
            break
        }
    }

    private func addBodyDeadline(context: ChannelHandlerContext) -> UInt64 {
        let number = requestNumber
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        return receiver.bodyDeadlines.add(
            { handler.eventLoop.execute { handler.value.bodyDeadlinePassed(requestNumber: number) } },
            deadline: .now.advanced(by: receiver.requestTimeout)
        )
    }

    private func cancel(_ deadline: UInt64?) {
        if let deadline { _ = receiver.bodyDeadlines.remove(deadline) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        switch state {
        case .reading(_, _, _, let deadline), .draining(let deadline):
            cancel(deadline)
            endSpan(status: nil, error: "the connection closed before the body ended")
            releasePlace()
            state = .closing
        default:
            break
        }
        // A notification waiting for the broker is answered (to nobody) when the report comes, freeing its place;
        // nothing that waited behind it is started.
        waiting.removeAll()
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        // What one read brings while a request is answered is all a connection buffers: a pipelining sender is read
        // no further until its earlier requests are answered.
        if waiting.isEmpty {
            context.read()
        } else {
            readPending = true
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        guard case .passing(let ended, answered: false) = state, case .end = unwrapOutboundIn(data) else { return }
        state = ended ? .idle : .passing(ended: false, answered: true)
        if ended { handleWaiting(context: context) }
    }

    /// Whether a part that comes now must wait: a notification's answer is pending, or the router's request ended
    /// and its answer is not yet written.
    private var isBusy: Bool {
        switch state {
        case .storing, .passing(ended: true, answered: false): true
        default: false
        }
    }

    private func handle(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch (state, part) {
        case (.idle, .head(let head)):
            guard let route = NotificationRoute(head, tokened: receiver.pathToken != nil) else {
                state = .passing(ended: false, answered: false)
                context.fireChannelRead(wrapInboundOut(part))
                return
            }
            start(route, head: head, context: context)
        case (.passing(_, let answered), _):
            if case .end = part { state = answered ? .idle : .passing(ended: true, answered: false) }
            context.fireChannelRead(wrapInboundOut(part))
        case (.reading(let target, var body, let contentType, let deadline), .body(var bytes)):
            guard body.readableBytes + bytes.readableBytes <= receiver.maximumBodySize else {
                cancel(deadline)
                respond(receiver.tooLarge(requestID: current?.requestID ?? ""), context: context, closing: true)
                return
            }
            // Not kept in `state` meanwhile, so the buffer is not shared and grows in place.
            state = .idle
            body.writeBuffer(&bytes)
            state = .reading(target: target, body: body, contentType: contentType, deadline: deadline)
        case (.reading(let target, let body, let contentType, let deadline), .end):
            cancel(deadline)
            store(body, target: target, contentType: contentType, context: context)
        case (.draining(let deadline), .end):
            cancel(deadline)
            state = .idle
        case (.draining, _), (.closing, _):
            break
        case (.idle, _), (.reading, .head), (.storing, _):
            // The HTTP decoder gives no body without a head, and no head before the end: nothing to do.
            break
        }
    }

    private func start(_ route: NotificationRoute, head: HTTPRequest, context: ChannelHandlerContext) {
        let requestID = RequestIdentifiers.next()
        requestNumber += 1
        let fields = NotificationRequestHead(head.headerFields)
        current = Current(
            route: route.label,
            requestID: requestID,
            closes: fields.closes,
            holdsPlace: false,
            span: receiver.startSpan(route, head: head, requestID: requestID)
        )
        let admitted = receiver.admit(
            route,
            head: head,
            declaredLength: fields.declaredLength,
            peer: context.channel.remoteAddress,
            requestID: requestID
        )
        switch admitted {
        case .success(let target):
            current?.holdsPlace = true
            let capacity = min(fields.declaredLength ?? 0, receiver.maximumBodySize)
            let body = context.channel.allocator.buffer(capacity: capacity)
            state = .reading(target: target, body: body, contentType: fields.contentType, deadline: nil)
            if fields.expectsContinue {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
        case .failure(let refusal):
            // Answered at once, the body dropped as it comes; one declared too large is not read at all.
            state = .draining(deadline: nil)
            respond(refusal, context: context, closing: refusal.status == .contentTooLarge)
        }
    }

    private func store(
        _ body: ByteBuffer,
        target: NotificationTarget,
        contentType: String?,
        context: ChannelHandlerContext
    ) {
        state = .storing
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        receiver.store(
            body,
            target: target,
            requestID: current?.requestID ?? "",
            contentType: contentType,
            span: current?.span
        ) { result in
            if handler.eventLoop.inEventLoop {
                handler.value.stored(result)
            } else {
                handler.eventLoop.execute { handler.value.stored(result) }
            }
        }
    }

    private func stored(_ result: Result<HTTPResponse, IngressRefusal>) {
        guard case .storing = state, let context else {
            endSpan(status: nil, error: "the connection closed before the answer")
            releasePlace()
            return
        }
        state = .idle
        switch result {
        case .success(let response): respond(response, body: nil, context: context, closing: false)
        case .failure(let refusal): respond(refusal, context: context, closing: false)
        }
        handleWaiting(context: context)
    }

    /// Closes the connection of a body that did not end by the request timeout (its request counted as 408).
    private func bodyDeadlinePassed(requestNumber number: Int) {
        guard number == requestNumber, let context else { return }
        switch state {
        case .reading:
            let refusal = receiver.bodyTimedOut(requestID: current?.requestID ?? "")
            receiver.metrics.countRequest(route: current?.route ?? "", status: refusal.status.code)
            endSpan(status: refusal.status.code, error: "the body did not arrive in time")
            releasePlace()
        case .draining:
            break
        default:
            return
        }
        state = .closing
        context.close(promise: nil)
    }

    private func respond(_ refusal: IngressRefusal, context: ChannelHandlerContext, closing: Bool) {
        let (head, body) = refusal.response()
        respond(head, body: body, context: context, closing: closing)
    }

    /// Writes the current notification's answer, counts it and frees its place; closing (or asked to close by the
    /// sender), the connection is closed once it is written.
    private func respond(_ head: HTTPResponse, body: ByteBuffer?, context: ChannelHandlerContext, closing: Bool) {
        var head = head
        head.headerFields[.server] = serverName
        let closes = closing || (current?.closes ?? false)
        if closes { head.headerFields[.connection] = "close" }
        receiver.metrics.countRequest(route: current?.route ?? "", status: head.status.code)
        endSpan(status: head.status.code, error: nil)
        releasePlace()
        current = nil
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        guard closes else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        state = .closing
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Ends the current notification's span: answered with `status`, or given up for `error`. A 5xx answer is an
    /// error of the span (Apple sends the notification again); a 4xx is the sender's.
    private func endSpan(status: Int?, error: String?) {
        guard let span = current?.span else { return }
        current?.span = nil
        if let status {
            span.attributes["http.response.status_code"] = status
        }
        if let error {
            span.setStatus(SpanStatus(code: .error, message: error))
        } else if let status, status >= 500 {
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    private func releasePlace() {
        guard current?.holdsPlace == true else { return }
        current?.holdsPlace = false
        receiver.release()
    }

    /// Handles the parts that waited, until one must wait again; then reads on if a read was held back.
    private func handleWaiting(context: ChannelHandlerContext) {
        var forwarded = false
        while let part = waiting.first, !isBusy {
            waiting.removeFirst()
            if case .passing = state { forwarded = true }
            handle(part, context: context)
            if case .passing = state { forwarded = true }
        }
        if forwarded { context.fireChannelReadComplete() }
        armBodyDeadline(context: context)
        if readPending, waiting.isEmpty {
            readPending = false
            context.read()
        }
    }
}
