import Ingress
import KafkaClient
import Logging
import PipelineContract
import ServiceLifecycle

/// `asnp ingress`: the raw topic's producer and the HTTP receiver Apple posts to.
package struct IngressRole: PipelineRole {
    package let producer: KafkaProducer
    package let server: IngressServer

    /// The producer first, so it stops (flushing) only after the server finished its requests.
    package var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        [.init(service: producer), .init(service: server)]
    }
}

/// Builds the ingress from its settings; `onListening` is called with the bound port once it accepts connections.
package func buildIngress(
    _ settings: IngressRoleSettings,
    logger: Logger,
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
    let server = try IngressServer(
        configuration: settings.ingress,
        producer: producer,
        logger: logger,
        onListening: onListening
    )
    return IngressRole(producer: producer, server: server)
}
