import Ingress
import KafkaClient
import Logging
import PipelineContract
import PipelineStatus
import PipelineTracing
import ServiceLifecycle

/// `asnp ingress`: the raw topic's producer, the HTTP receiver Apple posts to, and its status endpoints.
package struct IngressRole: PipelineRole {
    package let producer: KafkaProducer
    package let server: IngressServer
    /// The probes and `/metrics`, on `ingress.statusPort`.
    package let statusServer: StatusServer
    /// The requests' spans and their export (`tracing.*`).
    package let tracing: TracingBackend

    /// The span exporter first, so it stops (exporting the last spans) after everything that records them; then the
    /// producer, so it stops (flushing) only after the server finished its requests; the status endpoints answer
    /// (ready, scraped) until the server has.
    package var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        (tracing.service.map { [.init(service: $0)] } ?? [])
            + [.init(service: producer), .init(service: statusServer), .init(service: server)]
    }
}

/// Builds the ingress from its settings; `onListening` is called with the public port once it accepts connections,
/// `onStatusListening` with the status port.
package func buildIngress(
    _ settings: IngressRoleSettings,
    logger: Logger,
    onStatusListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in },
    onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
) throws -> IngressRole {
    logger.info(
        "Starting the ingress",
        metadata: [
            "kafka.bootstrap": "\(settings.producer.cluster.bootstrapServers.joined(separator: ","))",
            "kafka.topic": "\(settings.ingress.rawTopic)",
            "apps": "\(settings.apps.map(\.description).joined(separator: "; "))",
        ]
    )
    let producer = try KafkaProducer(configuration: settings.producer, logger: logger)
    let tracing = try TracingBackend.make(settings.tracing, logger: logger)
    let server = try IngressServer(
        configuration: settings.ingress,
        producer: producer,
        tracer: tracing.tracer,
        logger: logger,
        onListening: onListening
    )
    let statusServer = server.statusServer(
        configuration: settings.status,
        logger: logger,
        onListening: onStatusListening
    )
    return IngressRole(producer: producer, server: server, statusServer: statusServer, tracing: tracing)
}
