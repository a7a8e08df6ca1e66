import AppStoreModels
import HTTPTypes
import Hummingbird
import KafkaClient
import Logging
import Metrics
import NIOCore
import NIOFoundationCompat
import PipelineContract

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Handles `POST /v{1,2}/notifications/{environment}[/{app}]`: checks the sender and the body's size and shape,
/// puts the exact bytes on the raw topic and answers 200 only once the broker acknowledged them.
struct NotificationReceiver: Sendable {
    let configuration: IngressConfiguration
    let producer: KafkaProducer
    let metrics: IngressMetrics
    let limiter: ConcurrencyLimiter
    let deadlines: ProduceDeadlines
    let logger: Logger
    private let appsByName: [String: PipelineApp]

    init(
        configuration: IngressConfiguration,
        producer: KafkaProducer,
        metrics: IngressMetrics,
        logger: Logger
    ) {
        self.configuration = configuration
        self.producer = producer
        self.metrics = metrics
        self.limiter = ConcurrencyLimiter(limit: configuration.maximumConcurrentRequests)
        self.deadlines = ProduceDeadlines(timeout: configuration.acknowledgementTimeout)
        self.logger = logger
        self.appsByName = Dictionary(configuration.apps.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The route's environment segment in Apple's spelling, or nil for anything else.
    static func environment(forSegment segment: String) -> AppStoreEnvironment? {
        switch segment {
        case "production": .production
        case "sandbox": .sandbox
        default: nil
        }
    }

    func receive(_ request: Request, context: IngressRequestContext, version: Int) async throws -> Response {
        let requestID = UUID().uuidString.lowercased()
        var logger = self.logger
        logger[metadataKey: "request.id"] = "\(requestID)"

        // The sender first: an address outside the allow-list learns nothing about routes or apps.
        let client = ClientAddress.resolve(
            peer: context.remoteAddress?.ipAddress,
            forwardedFor: request.headers[values: .xForwardedFor],
            trustedProxies: configuration.trustedProxies
        )
        if !configuration.allowedSources.isEmpty {
            guard let client, configuration.allowedSources.contains(where: { $0.contains(client) }) else {
                logger.notice(
                    "Refused a notification from an address outside the allow-list",
                    metadata: [
                        "client.address": "\(client ?? "unknown")"
                    ]
                )
                return Self.answer(.forbidden, requestID: requestID, message: "this address may not post notifications")
            }
        }

        if let token = configuration.pathToken {
            guard let given = context.parameters.get("token"), Self.constantTimeEquals(given, token) else {
                return Self.answer(.notFound, requestID: requestID, message: "no such route")
            }
        }
        guard let segment = context.parameters.get("environment"),
            let environment = Self.environment(forSegment: segment)
        else {
            return Self.answer(
                .notFound,
                requestID: requestID,
                message: "the environment must be production or sandbox"
            )
        }
        let app: PipelineApp
        if let name = context.parameters.get("app") {
            guard let named = appsByName[name] else {
                return Self.answer(.notFound, requestID: requestID, message: "no app named '\(name)' is configured")
            }
            app = named
        } else {
            guard configuration.apps.count == 1 else {
                return Self.answer(
                    .notFound,
                    requestID: requestID,
                    message: "several apps are configured: add the app's name to the path"
                )
            }
            app = configuration.apps[0]
        }

        guard limiter.acquire() else {
            logger.warning(
                "Too many notification requests in progress; answering 503",
                metadata: [
                    "ingress.limit": "\(configuration.maximumConcurrentRequests)"
                ]
            )
            var response = Self.answer(.serviceUnavailable, requestID: requestID, message: "busy, retry later")
            response.headers[.retryAfter] = "1"
            return response
        }
        metrics.inFlightRequests.record(limiter.current)
        defer {
            limiter.release()
            metrics.inFlightRequests.record(limiter.current)
        }

        // Made only when needed: encoding an answer is a noticeable share of a request's CPU.
        func tooLarge() -> Response {
            Self.answer(
                .contentTooLarge,
                requestID: requestID,
                message: "the body is larger than \(configuration.maximumBodySize) bytes"
            )
        }
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > configuration.maximumBodySize {
            return tooLarge()
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: configuration.maximumBodySize)
        } catch is NIOTooManyBytesError {
            return tooLarge()
        }
        let receivedAt = Date()
        let bytes = Data(buffer: body, byteTransferStrategy: .noCopy)
        guard let key = PartitionKey.peek(body: bytes, version: version) else {
            logger.notice(
                "Refused a body that is not a JSON object",
                metadata: [
                    "http.body.size": "\(body.readableBytes)",
                    "http.content_type": "\(request.headers[.contentType] ?? "")",
                ]
            )
            return Self.answer(.badRequest, requestID: requestID, message: "the body is not a JSON object")
        }

        let headers = RawNotificationHeaders(
            version: version,
            environment: environment,
            app: app.name,
            receivedAt: receivedAt,
            requestID: requestID,
            source: .ingress
        )
        let message = KafkaProducerMessage(
            topic: configuration.rawTopic,
            key: key.value,
            value: body,
            headers: headers.fields.map { KafkaHeader(key: $0.name, string: $0.value) }
        )
        let start = ContinuousClock.now
        let outcome = await deadlines.send(message, with: producer)
        metrics.acknowledgementDuration.record(duration: ContinuousClock.now - start)
        switch outcome {
        case .acknowledged(let report):
            metrics.receivedBytes.increment(by: body.readableBytes)
            logger.debug(
                "Notification acknowledged by the broker",
                metadata: [
                    "kafka.partition": "\(report.topicPartition)", "kafka.offset": "\(report.offset)",
                    "notification.key.basis": "\(key.basis.rawValue)", "app": "\(app.name)",
                ]
            )
            var response = Response(status: .ok)
            response.headers[.xRequestID] = requestID
            return response
        case .failed(let error):
            metrics.countProduceFailure(code: error.code.rawValue)
            logger.warning(
                "The broker did not acknowledge a notification; answering 503",
                metadata: [
                    "error": "\(error)"
                ]
            )
        case .timedOut:
            metrics.countProduceFailure(code: "TIMED_OUT")
            logger.warning(
                "No acknowledgement from the broker in time; answering 503",
                metadata: [
                    "ingress.ack_timeout": "\(configuration.acknowledgementTimeout)"
                ]
            )
        }
        var response = Self.answer(.serviceUnavailable, requestID: requestID, message: "not stored, retry later")
        response.headers[.retryAfter] = "5"
        return response
    }

    /// A response with a short JSON error body (`{"error":{"message":...}}`, Hummingbird's shape) and the request id.
    static func answer(_ status: HTTPResponse.Status, requestID: String, message: String) -> Response {
        var object = [String: [String: String]]()
        object["error"] = ["message": message, "requestID": requestID]
        let json = (try? JSONEncoder().encode(object)) ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.xRequestID] = requestID
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }

    /// Compares without an early exit, so the time taken says nothing about how much of a secret matched.
    static func constantTimeEquals(_ given: String, _ expected: String) -> Bool {
        let given = Array(given.utf8)
        let expected = Array(expected.utf8)
        var difference = given.count ^ expected.count
        for index in expected.indices {
            difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
        }
        return difference == 0
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xRequestID = HTTPField.Name("X-Request-ID")!
}
