import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PipelineStatus
import PostgresRuntime
import Prometheus
import ServiceLifecycle
import Tracing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The read API (`asnp api`): a customer's access and a subscription's state and notifications over HTTP, from
/// PostgreSQL, for the keys of ``APIKeyringFile``. Docs/api.md is its guide, Docs/contract/openapi.yaml its contract.
///
/// Every answer is of one app and environment the key may read; anything else is answered as if it did not exist.
package final class ReadAPIServer: Service, Sendable {
    package let configuration: ReadAPIConfiguration
    package let reader: StateReader
    package let keys: APIKeyringFile
    package let metrics: ReadAPIMetrics
    private let limiter: KeyRateLimiter
    private let clock: @Sendable () -> Date
    /// A server span per request when tracing is on (`tracing.*`, service `asnp-api`).
    private let tracer: (any Tracer)?
    private let logger: Logger
    private let onListening: @Sendable (_ port: Int) async -> Void

    /// - Parameters:
    ///   - clock: what access is judged against; the system's clock but in tests.
    ///   - onListening: called with the bound port once the API accepts connections.
    package init(
        configuration: ReadAPIConfiguration,
        reader: StateReader,
        keys: APIKeyringFile,
        metrics: ReadAPIMetrics,
        clock: @escaping @Sendable () -> Date = { Date() },
        tracer: (any Tracer)? = nil,
        logger: Logger,
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.reader = reader
        self.keys = keys
        self.metrics = metrics
        self.limiter = KeyRateLimiter(requestsPerSecond: configuration.requestsPerSecond, burst: configuration.burst)
        self.clock = clock
        self.tracer = tracer
        self.logger = logger
        self.onListening = onListening
    }

    /// Serves until a graceful shutdown: then the requests in progress are answered and the server stops.
    package func run() async throws {
        let host = configuration.host
        let port = configuration.port
        let logger = logger
        let onListening = onListening
        let application = Application(
            router: router(),
            server: .http1(configuration: .init(idleTimeout: .init(configuration.idleTimeout))),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "asnp"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                logger.info("Read API listening", metadata: ["http.address": "\(host):\(bound)"])
                await onListening(bound)
            },
            logger: logger
        )
        try await application.run()
    }

    /// The probes and `/metrics`: ready once the schema is recent enough.
    package func statusServer(
        configuration: StatusServerConfiguration,
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> StatusServer {
        StatusServer(
            configuration: configuration,
            registry: metrics.registry,
            logger: logger,
            live: { nil },
            ready: { [reader] in reader.schemaProblem },
            onListening: onListening
        )
    }

    private func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: UnmatchedRequests(metrics: metrics))
        router.get("/v1/subscriptions/:originalTransactionId") { request, context in
            try await self.answer(
                request,
                context,
                route: "/v1/subscriptions/{originalTransactionId}",
                notFound: "subscription or purchase"
            ) { scope, now in
                let id = try Self.originalTransactionId(context)
                return try await self.reader.subscription(id, in: scope, at: now).map {
                    ResponseBodies.subscription($0, scope: scope)
                }
            }
        }
        router.get("/v1/subscriptions/:originalTransactionId/notifications") { request, context in
            try await self.answer(
                request,
                context,
                route: "/v1/subscriptions/{originalTransactionId}/notifications",
                notFound: "subscription"
            ) { scope, now in
                let id = try Self.originalTransactionId(context)
                let limit = try self.pageSize(request)
                var cursor: NotificationCursor?
                if let text = request.uri.queryParameters.get("cursor") {
                    guard let parsed = NotificationCursor(text: text) else {
                        throw APIProblem.invalidParameter("cursor", "is not one this API gave")
                    }
                    cursor = parsed
                }
                let page = try await self.reader.notifications(of: id, in: scope, from: cursor, limit: limit)
                // An unknown subscription is not an empty list: nothing of it exists for this key.
                if cursor == nil, page.notifications.isEmpty { return nil }
                return ResponseBodies.notifications(page, of: id, scope: scope)
            }
        }
        router.get("/v1/customers/:appAccountToken") { request, context in
            try await self.answer(
                request,
                context,
                route: "/v1/customers/{appAccountToken}",
                notFound: "customer"
            ) { scope, now in
                guard let text = context.parameters.get("appAccountToken"), let token = UUID(uuidString: text) else {
                    throw APIProblem.invalidParameter("appAccountToken", "must be a UUID (the token your app gave)")
                }
                let customer = try await self.reader.customer(
                    token,
                    in: scope,
                    at: now,
                    limit: self.configuration.maximumCustomerPurchases
                )
                return customer.map { ResponseBodies.customer($0, token: token, scope: scope) }
            }
        }
        return router
    }

    /// Answers one request: the key, its rate, the scope, then `body`'s JSON with an entity tag (or 304 when the
    /// client holds it); a problem instead wherever one arises. Counted and timed by `route`.
    ///
    /// `body` answers nil when there is nothing: 404, word for word what a scope the key may not read gets, so that
    /// an id of another app cannot be told from an unknown one.
    private func answer(
        _ request: Request,
        _ context: BasicRequestContext,
        route: String,
        notFound: String,
        _ body: (APIScope, Date) async throws -> [UInt8]?
    ) async throws -> Response {
        let started = ContinuousClock.now
        let span = startSpan(route, request)
        var keyID = ""
        let response: Response
        do {
            let key = try authenticate(request)
            keyID = key.id
            if let wait = limiter.take(key) {
                // Whole seconds (RFC 9110's delay-seconds), rounded up: a client that waits them finds a token.
                let seconds = max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
                throw APIProblem(
                    .tooManyRequests,
                    code: "rate_limited",
                    detail: "this key's rate is used up on this replica; try again after Retry-After seconds",
                    retryAfterSeconds: seconds
                )
            }
            guard let scope = try Self.scope(of: request, for: key) else { throw APIProblem.notFound(notFound) }
            if let problem = reader.schemaProblem {
                logger.debug("Not ready", metadata: ["reason": "\(problem)"])
                throw APIProblem(
                    .serviceUnavailable,
                    code: "not_ready",
                    detail: "the API cannot read its database yet",
                    retryAfterSeconds: 5
                )
            }
            guard let bytes = try await body(scope, clock()) else { throw APIProblem.notFound(notFound) }
            response = Self.resource(bytes, request: request)
        } catch let problem as APIProblem {
            response = Self.problem(problem)
        } catch let failure as PostgresFailure {
            response = Self.problem(databaseProblem(failure, route: route))
        } catch {
            // Not PostgreSQL's and not the request's: still a problem, counted like any answer.
            logger.error("A request failed", metadata: ["http.route": "\(route)", "error": "\(error)"])
            response = Self.problem(.internalFailure)
        }
        let duration = started.duration(to: .now)
        metrics.countRequest(route: route, status: response.status.code, key: keyID, duration: duration)
        if let span {
            span.attributes["http.response.status_code"] = response.status.code
            if !keyID.isEmpty { span.attributes["asnp.api.key"] = keyID }
            if response.status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
            span.end()
        }
        if logger.logLevel <= .debug {
            logger.debug(
                "Answered",
                metadata: [
                    "http.route": "\(route)", "http.status_code": "\(response.status.code)", "api.key": "\(keyID)",
                    "duration": "\(duration)",
                ]
            )
        }
        return response
    }

    /// The span of a request (nil when tracing is off), continuing the caller's `traceparent`. Named by the route's
    /// template: no id of a customer or subscription is recorded.
    private func startSpan(_ route: String, _ request: Request) -> (any Span)? {
        guard let tracer else { return nil }
        var context = ServiceContext.topLevel
        tracer.extract(request.headers, into: &context, using: HTTPFieldsExtractor())
        let span = tracer.startSpan("GET \(route)", context: context, ofKind: .server)
        span.attributes["http.request.method"] = "GET"
        span.attributes["http.route"] = route
        return span
    }

    /// The key of `Authorization: Bearer <key>`; a missing or unknown key is the same problem.
    private func authenticate(_ request: Request) throws(APIProblem) -> APIKey {
        guard let authorization = request.headers[.authorization] else { throw .unauthenticated }
        let parts = authorization.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer", let key = keys.keyring.key(presented: parts[1])
        else { throw .unauthenticated }
        return key
    }

    /// The app and environment a request is about: `bundleId` and `environment` from its query, each defaulting
    /// to the key's only one; nil for one the key may not read (answered as not found, as an unknown id is).
    static func scope(of request: Request, for key: APIKey) throws(APIProblem) -> APIScope? {
        let bundleId = request.uri.queryParameters.get("bundleId")
        let environment = request.uri.queryParameters.get("environment")
        if let environment, !APIScope.environments.contains(environment) {
            throw .invalidParameter(
                "environment",
                "must be one of \(APIScope.environments.joined(separator: ", ")), not '\(environment.prefix(40))'"
            )
        }
        let candidates = key.scopes.filter { scope in
            (bundleId.map { $0 == scope.bundleId } ?? true) && (environment.map { $0 == scope.environment } ?? true)
        }
        // Something the key may not read was named.
        if candidates.isEmpty { return nil }
        guard candidates.count == 1, let only = candidates.first else {
            throw APIProblem(
                .badRequest,
                code: "scope_required",
                detail: "this key reads several apps or environments: name bundleId and environment"
            )
        }
        return only
    }

    private static func originalTransactionId(_ context: BasicRequestContext) throws(APIProblem) -> String {
        guard let id = context.parameters.get("originalTransactionId"), (1...64).contains(id.utf8.count),
            id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
        else {
            throw .invalidParameter("originalTransactionId", "must be 1 to 64 printable ASCII characters")
        }
        return id
    }

    private func pageSize(_ request: Request) throws(APIProblem) -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return configuration.defaultPageSize }
        guard let limit = Int(text), (1...configuration.maximumPageSize).contains(limit) else {
            throw .invalidParameter("limit", "must be a whole number from 1 to \(configuration.maximumPageSize)")
        }
        return limit
    }

    /// A failure of PostgreSQL, logged in full and answered without its details: 503 when trying again may help.
    private func databaseProblem(_ failure: PostgresFailure, route: String) -> APIProblem {
        logger.warning("A read failed", metadata: ["http.route": "\(route)", "error": "\(failure)"])
        switch failure.kind {
        case .unavailable, .timedOut, .shutDown, .schemaNotReady, .authenticationFailed, .conflict:
            return APIProblem(
                .serviceUnavailable,
                code: "unavailable",
                detail: "the database did not answer in time; try again",
                retryAfterSeconds: 1
            )
        default:
            return .internalFailure
        }
    }

    /// A JSON answer with its entity tag, or 304 when `If-None-Match` holds that tag.
    private static func resource(_ bytes: [UInt8], request: Request) -> Response {
        let tag = EntityTag.of(bytes)
        var headers: HTTPFields = [.eTag: tag, .cacheControl: "private, no-cache"]
        if EntityTag.matches(ifNoneMatch: request.headers[values: .ifNoneMatch], tag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func problem(_ problem: APIProblem) -> Response {
        var headers = problem.headers
        headers[.contentType] = "application/problem+json"
        headers[.cacheControl] = "no-store"
        if let seconds = problem.retryAfterSeconds { headers[.retryAfter] = "\(seconds)" }
        return Response(
            status: problem.status,
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: problem.body))
        )
    }
}

/// Requests no route takes (another path or method): answered as a problem, and counted as route `unmatched`.
private struct UnmatchedRequests: RouterMiddleware {
    typealias Context = BasicRequestContext
    let metrics: ReadAPIMetrics

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            let response = ReadAPIServer.problem(
                APIProblem(
                    error.status,
                    code: error.status == .notFound ? "not_found" : "invalid_request",
                    detail: "no such route: \(request.method) \(request.uri.path)"
                )
            )
            metrics.countRequest(
                route: "unmatched",
                status: response.status.code,
                key: "",
                duration: started.duration(to: .now)
            )
            return response
        }
    }
}
