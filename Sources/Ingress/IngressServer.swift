import CoreMetrics
import Hummingbird
import HummingbirdCore
import KafkaClient
import Logging
import NIOCore
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
        let receiver = NotificationReceiver(
            configuration: configuration,
            producer: producer,
            metrics: metrics,
            logger: logger
        )
        let readiness = ReadinessProbe(
            producer: producer,
            topic: configuration.rawTopic,
            timeout: configuration.readinessTimeout,
            cacheDuration: configuration.readinessCacheDuration
        )
        let router = Router(context: IngressRequestContext.self)
        router.add(middleware: IngressMiddleware(metrics: metrics, pathToken: configuration.pathToken))
        let prefix = configuration.pathToken == nil ? "" : "/:token"
        for version in [1, 2] {
            let handler: @Sendable (Request, IngressRequestContext) async throws -> Response = { request, context in
                try await receiver.receive(request, context: context, version: version)
            }
            router.post("\(prefix)/v\(version)/notifications/:environment", use: handler)
            router.post("\(prefix)/v\(version)/notifications/:environment/:app", use: handler)
        }
        router.get("/health/live") { _, _ in
            Self.text(.ok, "live\n")
        }
        router.get("/health/ready") { _, _ in
            if let failure = await readiness.check() {
                return Self.text(.serviceUnavailable, "not ready: \(failure)\n")
            }
            return Self.text(.ok, "ready\n")
        }
        router.get("/metrics") { _, _ in
            metrics.producerQueueDepth.record(producer.queuedMessages)
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok,
                headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.render()))
            )
        }

        let idleTimeout = TimeAmount.nanoseconds(
            Int64(clamping: configuration.idleTimeout.components.seconds) * 1_000_000_000
                + configuration.idleTimeout.components.attoseconds / 1_000_000_000
        )
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
            logger: logger
        )
    }

    /// Serves until graceful shutdown (then finishes the requests in progress) or cancellation.
    package func run() async throws {
        try await application.run()
    }

    private static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
