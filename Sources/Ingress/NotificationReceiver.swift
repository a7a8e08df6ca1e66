import AppStoreModels
import HTTPTypes
import KafkaClient
import Logging
import Metrics
import NIOCore
import NIOFoundationCompat
import PipelineContract
import PipelineStatus
import Tracing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the notification routes do, shared by every connection's ``NotificationRequestHandler``: admits a request
/// at its head (sender, path token, concurrency, environment and app, declared size), then puts the exact bytes of
/// its body on the raw topic and answers 200 only once the broker acknowledged them.
struct NotificationReceiver: Sendable {
    let rawTopic: String
    let maximumBodySize: Int
    let acknowledgementTimeout: Duration
    let requestTimeout: Duration
    let allowedSources: [IPNetwork]
    let trustedProxies: [IPNetwork]
    let pathToken: String?
    let targets: NotificationTargets
    let limiter: ConcurrencyLimiter
    let producer: KafkaProducer
    let metrics: IngressMetrics
    let deadlines: ProduceDeadlines
    /// The body deadline of each request whose body did not come with its head: called once the deadline passed.
    let bodyDeadlines: DeadlineSweeper<@Sendable () -> Void>
    /// Starts a span per notification request; nil when tracing is off.
    let tracer: (any Tracer)?
    let logger: Logger

    init(
        configuration: IngressConfiguration,
        producer: KafkaProducer,
        metrics: IngressMetrics,
        tracer: (any Tracer)?,
        logger: Logger
    ) {
        self.rawTopic = configuration.rawTopic
        self.maximumBodySize = configuration.maximumBodySize
        self.acknowledgementTimeout = configuration.acknowledgementTimeout
        self.requestTimeout = configuration.requestTimeout
        self.allowedSources = configuration.allowedSources
        self.trustedProxies = configuration.trustedProxies
        self.pathToken = configuration.pathToken
        self.targets = NotificationTargets(apps: configuration.apps)
        self.limiter = ConcurrencyLimiter(limit: configuration.maximumConcurrentRequests)
        self.producer = producer
        self.metrics = metrics
        self.deadlines = ProduceDeadlines(timeout: configuration.acknowledgementTimeout)
        self.bodyDeadlines = DeadlineSweeper(granularity: min(.milliseconds(50), configuration.requestTimeout / 10)) {
            $0()
        }
        self.tracer = tracer
        self.logger = logger
    }

    /// Admits a request from its head, taking one of `ingress.maximumConcurrentRequests` places, or refuses it:
    /// an address outside the allow-list first (403: such a sender learns nothing about routes or apps), then a
    /// wrong path token (404, as for a route that does not exist), no place left (503, `Retry-After: 1`), an unknown
    /// environment or app (404), a notification the configuration cannot verify (503), a declared size over the
    /// limit (413). An admitted request's place is given back with ``release()`` once it is answered.
    /// `declaredLength` is the head's `Content-Length`.
    func admit(
        _ route: NotificationRoute,
        head: HTTPRequest,
        declaredLength: Int?,
        peer: SocketAddress?,
        requestID: String
    ) -> Result<NotificationTarget, IngressRefusal> {
        if !allowedSources.isEmpty {
            let client = ClientAddress.resolve(
                peer: peer?.ipAddress,
                forwardedFor: head.headerFields[values: .xForwardedFor],
                trustedProxies: trustedProxies
            )
            guard let client, allowedSources.contains(where: { $0.contains(client) }) else {
                logger.notice(
                    "Refused a notification from an address outside the allow-list",
                    metadata: ["client.address": "\(client ?? "unknown")", "request.id": "\(requestID)"]
                )
                return .failure(
                    IngressRefusal(.forbidden, "this address may not post notifications", requestID: requestID)
                )
            }
        }
        if let pathToken {
            guard let given = route.token, constantTimeEquals(given, pathToken) else {
                return .failure(IngressRefusal(.notFound, "no such route", requestID: requestID))
            }
        }
        guard limiter.acquire() else {
            metrics.busyRefusals.increment()
            logger.warning(
                "Too many notification requests in progress; answering 503",
                metadata: ["ingress.limit": "\(limiter.limit)", "request.id": "\(requestID)"]
            )
            return .failure(
                IngressRefusal(.serviceUnavailable, "busy, retry later", requestID: requestID, retryAfterSeconds: 1)
            )
        }
        metrics.inFlightRequests.record(limiter.current)
        do throws(IngressRefusal) {
            let target = try targets.target(for: route, requestID: requestID)
            if let reason = target.unverifiableReason {
                metrics.countUnverifiable(target)
                throw IngressRefusal(.serviceUnavailable, reason, requestID: requestID)
            }
            if let declaredLength, declaredLength > maximumBodySize {
                throw tooLarge(requestID: requestID)
            }
            return .success(target)
        } catch {
            release()
            return .failure(error)
        }
    }

    /// The span of a notification request, from its head to its answer (nil when tracing is off): it continues the
    /// sender's trace when the head carries a `traceparent`, and is the parent of the raw-topic message's context.
    /// The route is named by its template: a path token is never recorded.
    func startSpan(_ route: NotificationRoute, head: HTTPRequest, requestID: String) -> (any Span)? {
        guard let tracer else { return nil }
        var context = ServiceContext.topLevel
        tracer.extract(head.headerFields, into: &context, using: HTTPFieldsExtractor())
        let span = tracer.startSpan("POST \(route.label)", context: context, ofKind: .server)
        span.attributes["http.request.method"] = "POST"
        span.attributes["http.route"] = route.label
        span.attributes["asnp.request_id"] = requestID
        return span
    }

    /// Gives back an admitted request's place.
    func release() {
        limiter.release()
        metrics.inFlightRequests.record(limiter.current)
    }

    func tooLarge(requestID: String) -> IngressRefusal {
        IngressRefusal(.contentTooLarge, "the body is larger than \(maximumBodySize) bytes", requestID: requestID)
    }

    /// Logs and refuses a request whose body did not arrive by the request timeout (its connection is closed).
    func bodyTimedOut(requestID: String) -> IngressRefusal {
        logger.notice(
            "Closed a connection whose body did not arrive in time",
            metadata: ["ingress.request_timeout": "\(requestTimeout)", "request.id": "\(requestID)"]
        )
        return IngressRefusal(.requestTimeout, "the body did not arrive in time", requestID: requestID)
    }

    /// Puts an admitted request's complete body on the raw topic; `completion` gets the answer once the broker
    /// acknowledged it (200) or did not in time (503, so Apple retries), on a thread of librdkafka's or the
    /// sweeper's, or at once for a body that is not a JSON object (400).
    func store(
        _ body: ByteBuffer,
        target: NotificationTarget,
        requestID: String,
        contentType: String?,
        span: (any Span)?,
        completion: @escaping @Sendable (Result<HTTPResponse, IngressRefusal>) -> Void
    ) {
        let receivedAt = Date()
        guard
            let key = PartitionKey.peek(
                body: Data(buffer: body, byteTransferStrategy: .noCopy),
                version: target.version
            )
        else {
            logger.notice(
                "Refused a body that is not a JSON object",
                metadata: [
                    "http.body.size": "\(body.readableBytes)", "http.content_type": "\(contentType ?? "")",
                    "request.id": "\(requestID)",
                ]
            )
            completion(.failure(IngressRefusal(.badRequest, "the body is not a JSON object", requestID: requestID)))
            return
        }
        let headers = RawNotificationHeaders(
            version: target.version,
            environment: target.environment,
            app: target.app.name,
            receivedAt: receivedAt,
            requestID: requestID,
            source: .ingress
        )
        var message = headers.message(body: body, key: key, topic: rawTopic)
        if let tracer, let span {
            // The worker's spans of this notification continue the request's trace.
            tracer.inject(span.context, into: &message.headers, using: KafkaHeadersInjector())
        }
        let start = ContinuousClock.now
        let bodySize = body.readableBytes
        deadlines.send(message, with: producer) { outcome in
            completion(self.answer(outcome, start: start, bodySize: bodySize, key: key, target: target, requestID))
        }
    }

    private func answer(
        _ outcome: ProduceDeadlines.Outcome,
        start: ContinuousClock.Instant,
        bodySize: Int,
        key: PartitionKey,
        target: NotificationTarget,
        _ requestID: String
    ) -> Result<HTTPResponse, IngressRefusal> {
        metrics.acknowledgementDuration.record(duration: ContinuousClock.now - start)
        // Given to each log line rather than set on the logger: setting metadata makes swift-log's text handler
        // format all of it again, for every request.
        let requestIDMetadata = Logger.MetadataValue.string(requestID)
        switch outcome {
        case .acknowledged(let report):
            metrics.receivedBytes.increment(by: bodySize)
            logger.debug(
                "Notification acknowledged by the broker",
                metadata: [
                    "kafka.partition": "\(report.topicPartition)", "kafka.offset": "\(report.offset)",
                    "notification.key.basis": "\(key.basis.rawValue)", "app": "\(target.app.name)",
                    "request.id": requestIDMetadata,
                ]
            )
            var fields = HTTPFields()
            fields[.contentLength] = "0"
            fields[.xRequestID] = requestID
            return .success(HTTPResponse(status: .ok, headerFields: fields))
        case .failed(let error):
            metrics.countProduceFailure(code: error.code.rawValue)
            logger.warning(
                "The broker did not acknowledge a notification; answering 503",
                metadata: ["error": "\(error)", "request.id": requestIDMetadata]
            )
        case .timedOut:
            metrics.countProduceFailure(code: "TIMED_OUT")
            logger.warning(
                "No acknowledgement from the broker in time; answering 503",
                metadata: ["ingress.ack_timeout": "\(acknowledgementTimeout)", "request.id": requestIDMetadata]
            )
        }
        return .failure(
            IngressRefusal(.serviceUnavailable, "not stored, retry later", requestID: requestID, retryAfterSeconds: 5)
        )
    }
}
