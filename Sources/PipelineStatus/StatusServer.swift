import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// The small HTTP server of a service without HTTP traffic of its own (the worker): Kubernetes probes and the
/// Prometheus scrape.
///
/// - `GET /health/live`: 200 while `live()` says nothing is wrong, else 503 with the reason (restart me).
/// - `GET /health/ready`: 200 while `ready()` says nothing is wrong, else 503 with the reason.
/// - `GET /metrics`: `beforeScrape()` (to sample gauges), then everything in the registry, in Prometheus' text format.
package final class StatusServer: Service, Sendable {
    package let configuration: StatusServerConfiguration
    private let application: Application<RouterResponder<BasicRequestContext>>

    /// - Parameters:
    ///   - live: nil when live, else why not.
    ///   - ready: nil when ready, else why not.
    ///   - onListening: called with the bound port once the server accepts connections.
    package init(
        configuration: StatusServerConfiguration,
        registry: PrometheusCollectorRegistry,
        logger: Logger,
        live: @escaping @Sendable () async -> String?,
        ready: @escaping @Sendable () async -> String?,
        beforeScrape: @escaping @Sendable () async -> Void = {},
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        let router = Router(context: BasicRequestContext.self)
        router.get("/health/live") { _, _ in
            await Self.probe(live, okText: "live")
        }
        router.get("/health/ready") { _, _ in
            await Self.probe(ready, okText: "ready")
        }
        router.get("/metrics") { _, _ in
            await beforeScrape()
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return Self.response(.ok, "text/plain; version=0.0.4; charset=utf-8", ByteBuffer(bytes: bytes))
        }
        let host = configuration.host
        let port = configuration.port
        application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "asnp"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                logger.info("Status endpoints listening", metadata: ["http.address": "\(host):\(bound)"])
                await onListening(bound)
            },
            logger: logger
        )
    }

    /// Serves until graceful shutdown or cancellation.
    package func run() async throws {
        try await application.run()
    }

    private static func probe(_ check: @Sendable () async -> String?, okText: String) async -> Response {
        if let problem = await check() {
            let text = ByteBuffer(string: "not \(okText): \(problem)\n")
            return response(.serviceUnavailable, "text/plain; charset=utf-8", text)
        }
        return response(.ok, "text/plain; charset=utf-8", ByteBuffer(string: "\(okText)\n"))
    }

    private static func response(_ status: HTTPResponse.Status, _ contentType: String, _ body: ByteBuffer) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body))
    }
}
