import AppStoreModels
import CoreMetrics
import Hummingbird
import HummingbirdCore
import KafkaClient
import Logging
import NIOCore
import PipelineStatus
import Prometheus
import ServiceLifecycle

/// The HTTP receiver Apple posts to, as a `Service`.
///
/// Routes (Docs/ingress.md): `POST /v2/notifications/{environment}[/{app}]` and the same under `/v1/`, optionally
/// behind a secret first segment; `GET /health/live`, `GET /health/ready`, `GET /metrics`.
///
/// On graceful shutdown it stops accepting connections and finishes the requests in progress, each answered 200
/// only if the broker acknowledged its body. Put the producer before it in the `ServiceGroup`, so the producer
/// shuts down (flushing) only after the server stopped.
package final class IngressServer: Service, Sendable {
    package let configuration: IngressConfiguration
    private let application: Application<RouterResponder<IngressRequestContext>>

    /// Creates the server; throws ``IngressError/Code/invalidConfiguration`` for invalid settings.
    ///
    /// - Parameters:
    ///   - producer: The producer of the raw topic; its delivery timeout should not exceed the acknowledgement timeout.
    ///   - registry: Where the ingress's metrics live; `GET /metrics` serves everything in it.
    ///   - onListening: Called with the bound port once the server accepts connections.
    package init(
        configuration: IngressConfiguration,
        producer: KafkaProducer,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        logger: Logger,
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) throws(IngressError) {
        try configuration.validate()
        self.configuration = configuration
        let metrics = IngressMetrics(registry: registry)
        let readiness = ReadinessProbe(
            producer: producer,
            topic: configuration.rawTopic,
            timeout: configuration.readinessTimeout,
            cacheDuration: configuration.readinessCacheDuration
        )
        let router = Router(context: IngressRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics, pathToken: configuration.pathToken))
        router.addRoutes(
            HealthRoutes.collection(
                context: IngressRequestContext.self,
                registry: registry,
                ready: { await readiness.check() },
                beforeScrape: { metrics.producerQueueDepth.record(producer.queuedMessages) }
            )
        )
        router.addRoutes(Self.notificationRoutes(configuration, producer: producer, metrics: metrics, logger: logger))

        // Hummingbird gives every request's logger its own id: set lazily (see the handler).
        var applicationLogger = logger
        applicationLogger.handler = LazyMetadataLogHandler(wrapping: logger.handler)
        let idleTimeout = TimeAmount(configuration.idleTimeout)
        let host = configuration.host
        let port = configuration.port
        application = Application(
            router: router,
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: idleTimeout)),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "asnp"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                logger.info("Ingress listening", metadata: ["http.address": "\(host):\(bound)"])
                await onListening(bound)
            },
            logger: applicationLogger
        )
    }

    /// Serves until graceful shutdown (then finishes the requests in progress) or cancellation.
    package func run() async throws {
        try await application.run()
    }

    /// `POST /v{1,2}/notifications/{environment}[/{app}]`, behind the path token when one is set: the sender's
    /// address first, then the token, then the concurrency limit; the receiver does the rest.
    private static func notificationRoutes(
        _ configuration: IngressConfiguration,
        producer: KafkaProducer,
        metrics: IngressMetrics,
        logger: Logger
    ) -> RouteCollection<IngressRequestContext> {
        let routes = RouteCollection(context: IngressRequestContext.self)
        if !configuration.allowedSources.isEmpty {
            routes.add(
                middleware: SenderAllowListMiddleware(
                    allowedSources: configuration.allowedSources,
                    trustedProxies: configuration.trustedProxies,
                    logger: logger
                )
            )
        }
        if let token = configuration.pathToken {
            routes.add(middleware: PathTokenMiddleware(token: token))
        }
        routes.add(
            middleware: ConcurrencyLimitMiddleware(
                limit: configuration.maximumConcurrentRequests,
                metrics: metrics,
                logger: logger
            )
        )
        let targets = NotificationTargets(apps: configuration.apps)
        // One warning per reason: a V1 reason holds for both environments.
        var warned: Set<String> = []
        for app in configuration.apps {
            for version in [1, 2] {
                for environment in [AppStoreEnvironment.production, .sandbox] {
                    let target = NotificationTarget(version: version, environment: environment, app: app)
                    guard let reason = target.unverifiableReason, warned.insert(reason).inserted else { continue }
                    logger.warning(
                        "Such notifications are refused with 503 until the app is configured",
                        metadata: ["reason": "\(reason)", "version": "\(version)"]
                    )
                }
            }
        }
        let receiver = NotificationReceiver(
            configuration: configuration,
            producer: producer,
            metrics: metrics,
            logger: logger
        )
        let prefix = configuration.pathToken == nil ? "" : "/:\(PathTokenMiddleware.parameter)"
        for version in [1, 2] {
            let handler: @Sendable (Request, IngressRequestContext) async throws -> Response = { request, context in
                let target = try targets.target(version: version, context: context)
                if let reason = target.unverifiableReason {
                    metrics.countUnverifiable(target)
                    throw IngressRefusal(.serviceUnavailable, reason, requestID: context.requestID)
                }
                return try await receiver.receive(
                    request,
                    target: target,
                    requestID: context.requestID,
                    channel: context.channel
                )
            }
            routes.post("\(prefix)/v\(version)/notifications/:environment", use: handler)
            routes.post("\(prefix)/v\(version)/notifications/:environment/:app", use: handler)
        }
        return routes
    }
}
