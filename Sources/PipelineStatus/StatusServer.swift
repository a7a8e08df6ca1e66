import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// The small HTTP server of every long-running role (the ingress, the worker, the periodic reconciler): the
/// ``HealthRoutes`` for Kubernetes probes and the Prometheus scrape, on a port apart from any public traffic.
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
        router.addRoutes(
            HealthRoutes.collection(
                context: BasicRequestContext.self,
                registry: registry,
                live: live,
                ready: ready,
                beforeScrape: beforeScrape
            )
        )
        let host = configuration.host
        let port = configuration.port
        application = Application(
            router: router,
            server: HTTPServerBuilder { AcceptedHTTP1Channel(responder: $0) },
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
}
