import CoreMetrics
import Hummingbird
import Logging

/// Answers 503 with `Retry-After: 1` past `ingress.maximumConcurrentRequests` notification requests in progress,
/// and keeps the in-flight gauge.
struct ConcurrencyLimitMiddleware: RouterMiddleware {
    typealias Context = IngressRequestContext

    let limiter: ConcurrencyLimiter
    let metrics: IngressMetrics
    let logger: Logger

    init(limit: Int, metrics: IngressMetrics, logger: Logger) {
        self.limiter = ConcurrencyLimiter(limit: limit)
        self.metrics = metrics
        self.logger = logger
    }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard limiter.acquire() else {
            metrics.busyRefusals.increment()
            logger.warning(
                "Too many notification requests in progress; answering 503",
                metadata: [
                    "ingress.limit": "\(limiter.limit)", "request.id": "\(context.requestID)",
                ]
            )
            throw IngressRefusal(
                .serviceUnavailable,
                "busy, retry later",
                requestID: context.requestID,
                retryAfterSeconds: 1
            )
        }
        metrics.inFlightRequests.record(limiter.current)
        defer {
            limiter.release()
            metrics.inFlightRequests.record(limiter.current)
        }
        return try await next(request, context)
    }
}
