import AppStoreModels
import CoreMetrics
import Hummingbird
import HummingbirdCore
import KafkaClient
import Logging
import NIOCore
import NIOPosix
import PipelineStatus
import Prometheus
import ServiceLifecycle
import Tracing

/// The HTTP receiver Apple posts to, as a `Service`.
///
/// Routes (Docs/ingress.md): `POST /v2/notifications/{environment}[/{app}]` and the same under `/v1/`, optionally
/// behind a secret first segment, answered on the event loop by ``NotificationRequestHandler``; nothing else (every
/// other path is 404, or 405 through Hummingbird's router). The probes and `/metrics` are on a port of their own,
/// ``statusServer(configuration:logger:onListening:)``, so a load balancer in front of this one never exposes them.
///
/// On graceful shutdown it stops accepting connections and finishes the requests in progress, each answered 200
/// only if the broker acknowledged its body. Put the producer before it in the `ServiceGroup`, so the producer
/// shuts down (flushing) only after the server stopped.
package final class IngressServer: Service, Sendable {
    package let configuration: IngressConfiguration
    /// The server on the event loops given: made when it runs, so that event loops of its own
    /// (``IngressConfiguration/eventLoopThreads``) exist only while it does.
    private let makeApplication: @Sendable (EventLoopGroupProvider) -> Application<RouterResponder<BasicRequestContext>>
    private let registry: PrometheusCollectorRegistry
    private let metrics: IngressMetrics
    private let readiness: ReadinessProbe
    private let producer: KafkaProducer

    /// Creates the server; throws ``IngressError/Code/invalidConfiguration`` for invalid settings.
    ///
    /// - Parameters:
    ///   - producer: The producer of the raw topic; its delivery timeout should not exceed the acknowledgement timeout.
    ///   - registry: Where the ingress's metrics live; the status server's `GET /metrics` serves everything in it.
    ///   - tracer: Records a span per notification request and passes its context on in the raw-topic message's
    ///     headers; nil for no tracing.
    ///   - onListening: Called with the bound port once the server accepts connections.
    package init(
        configuration: IngressConfiguration,
        producer: KafkaProducer,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        tracer: (any Tracer)? = nil,
        logger: Logger,
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) throws(IngressError) {
        try configuration.validate()
        self.configuration = configuration
        self.registry = registry
        self.producer = producer
        let metrics = IngressMetrics(registry: registry)
        self.metrics = metrics
        readiness = ReadinessProbe(
            producer: producer,
            topic: configuration.rawTopic,
            timeout: configuration.readinessTimeout,
            cacheDuration: configuration.readinessCacheDuration
        )
        // No routes: what the notification handler leaves to the router is counted and answered 404 (or 405).
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics, pathToken: configuration.pathToken))
        Self.warnAboutUnverifiableTargets(configuration, logger: logger)
        let receiver = NotificationReceiver(
            configuration: configuration,
            producer: producer,
            metrics: metrics,
            tracer: tracer,
            logger: logger
        )

        // Hummingbird gives every request's logger its own id: set lazily (see the handler).
        let applicationLogger = {
            var applicationLogger = logger
            applicationLogger.handler = LazyMetadataLogHandler(wrapping: logger.handler)
            return applicationLogger
        }()
        let idleTimeout = configuration.idleTimeout
        let host = configuration.host
        let port = configuration.port
        let serverName = "asnp"
        let responder = router.buildResponder()
        makeApplication = { eventLoopGroupProvider in
            Application(
                responder: responder,
                server: HTTPServerBuilder { responder in
                    IngressChannel(
                        responder: responder,
                        receiver: receiver,
                        serverName: serverName,
                        idleTimeout: idleTimeout
                    )
                },
                configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: serverName),
                onServerRunning: { channel in
                    let bound = channel.localAddress?.port ?? port
                    logger.info("Ingress listening", metadata: ["http.address": "\(host):\(bound)"])
                    await onListening(bound)
                },
                eventLoopGroupProvider: eventLoopGroupProvider,
                logger: applicationLogger
            )
        }
    }

    /// Serves until graceful shutdown (then finishes the requests in progress) or cancellation.
    package func run() async throws {
        guard let threads = configuration.eventLoopThreads else {
            try await makeApplication(.singleton).run()
            return
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        do {
            try await makeApplication(.shared(group)).run()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    /// The ingress's probes and scrape on a port of their own (``HealthRoutes``, as the worker's): `/health/ready`
    /// while the producer reaches a broker that has the raw topic, `/metrics` everything in the ingress's registry.
    /// Run it beside this server in the same `ServiceGroup`.
    package func statusServer(
        configuration: StatusServerConfiguration,
        logger: Logger,
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> StatusServer {
        let readiness = readiness
        let metrics = metrics
        let producer = producer
        let rawTopicName = self.configuration.rawTopic
        return StatusServer(
            configuration: configuration,
            registry: registry,
            logger: logger,
            live: { nil },
            ready: { await readiness.check() },
            beforeScrape: {
                metrics.producerQueueDepth.record(producer.queuedMessages)
                if let rawTopic = producer.statistics.topics[rawTopicName] { metrics.recordRawTopic(rawTopic) }
            },
            onListening: onListening
        )
    }

    /// Warns once per reason about the notifications the configuration cannot verify: they are refused with 503.
    private static func warnAboutUnverifiableTargets(_ configuration: IngressConfiguration, logger: Logger) {
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
    }
}
