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

/// Handles `POST /v{1,2}/notifications/{environment}[/{app}]` once the middleware admitted the request (sender,
/// path token, concurrency): reads the body, takes its key, puts the exact bytes on the raw topic and answers 200
/// only once the broker acknowledged them.
struct NotificationReceiver: Sendable {
    let rawTopic: String
    let maximumBodySize: Int
    let acknowledgementTimeout: Duration
    let requestTimeout: Duration
    let producer: KafkaProducer
    let metrics: IngressMetrics
    let deadlines: ProduceDeadlines
    /// The body deadline of each request being read: its connection, closed once the deadline passed.
    let bodyDeadlines: DeadlineSweeper<any Channel>
    let logger: Logger

    init(configuration: IngressConfiguration, producer: KafkaProducer, metrics: IngressMetrics, logger: Logger) {
        self.rawTopic = configuration.rawTopic
        self.maximumBodySize = configuration.maximumBodySize
        self.acknowledgementTimeout = configuration.acknowledgementTimeout
        self.requestTimeout = configuration.requestTimeout
        self.producer = producer
        self.metrics = metrics
        self.deadlines = ProduceDeadlines(timeout: configuration.acknowledgementTimeout)
        self.bodyDeadlines = DeadlineSweeper(granularity: min(.milliseconds(50), configuration.requestTimeout / 10)) {
            $0.close(promise: nil)
        }
        self.logger = logger
    }

    func receive(
        _ request: Request,
        target: NotificationTarget,
        requestID: String,
        channel: any Channel
    ) async throws -> Response {
        // Given to each log line rather than set on the logger: setting metadata makes swift-log's text handler
        // format all of it again, for every request.
        let requestIDMetadata = Logger.MetadataValue.string(requestID)
        // Made only when needed: encoding an answer is a noticeable share of a request's CPU.
        func tooLarge() -> IngressRefusal {
            IngressRefusal(.contentTooLarge, "the body is larger than \(maximumBodySize) bytes", requestID: requestID)
        }
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > maximumBodySize {
            throw tooLarge()
        }
        // The body must be in by the deadline: closing the connection then ends the read below and frees this
        // request's place, however the sender trickles. What was read of it is never stored.
        let deadline = bodyDeadlines.add(channel, deadline: .now.advanced(by: requestTimeout))
        let read: Result<ByteBuffer, any Error>
        do {
            read = .success(try await request.body.collect(upTo: maximumBodySize))
        } catch {
            read = .failure(error)
        }
        let inTime = bodyDeadlines.remove(deadline) != nil
        if case .failure(let error) = read {
            if error is NIOTooManyBytesError { throw tooLarge() }
            // A read the deadline ended; any other failure is the connection's.
            guard !inTime else { throw error }
        }
        guard inTime, case .success(let body) = read else {
            logger.notice(
                "Closed a connection whose body did not arrive in time",
                metadata: [
                    "ingress.request_timeout": "\(requestTimeout)", "request.id": requestIDMetadata,
                ]
            )
            throw IngressRefusal(.requestTimeout, "the body did not arrive in time", requestID: requestID)
        }
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
                    "http.body.size": "\(body.readableBytes)",
                    "http.content_type": "\(request.headers[.contentType] ?? "")", "request.id": requestIDMetadata,
                ]
            )
            throw IngressRefusal(.badRequest, "the body is not a JSON object", requestID: requestID)
        }

        let headers = RawNotificationHeaders(
            version: target.version,
            environment: target.environment,
            app: target.app.name,
            receivedAt: receivedAt,
            requestID: requestID,
            source: .ingress
        )
        let message = headers.message(body: body, key: key, topic: rawTopic)
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
                    "notification.key.basis": "\(key.basis.rawValue)", "app": "\(target.app.name)",
                    "request.id": requestIDMetadata,
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
                    "error": "\(error)", "request.id": requestIDMetadata,
                ]
            )
        case .timedOut:
            metrics.countProduceFailure(code: "TIMED_OUT")
            logger.warning(
                "No acknowledgement from the broker in time; answering 503",
                metadata: [
                    "ingress.ack_timeout": "\(acknowledgementTimeout)", "request.id": requestIDMetadata,
                ]
            )
        }
        throw IngressRefusal(.serviceUnavailable, "not stored, retry later", requestID: requestID, retryAfterSeconds: 5)
    }
}
