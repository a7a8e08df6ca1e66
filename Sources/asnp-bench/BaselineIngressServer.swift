import AppStoreModels
import Foundation
import HTTPTypes
import Hummingbird
import Ingress
import KafkaClient
import Logging
import NIOCore
import NIOFoundationCompat
import PipelineContract
import ServiceLifecycle

/// The baseline of `asnp-bench ingress`: an HTTP server on the ingress's stack (Hummingbird, HTTP/1.1) that does
/// the ingress's work up to the produce — reads the body within the size limit, peeks the partition key, builds the
/// raw-topic headers and message — and answers 200 without producing. Measured beside the real ingress, it shows
/// what waiting for the broker's acknowledgement costs. Never for serving Apple: nothing is kept.
struct BaselineIngressServer: Service {
    private let application: Application<RouterResponder<BasicRequestContext>>

    init(configuration: IngressConfiguration, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void) {
        let router = Router()
        let maximumBodySize = configuration.maximumBodySize
        let rawTopic = configuration.rawTopic
        let app = configuration.apps[0].name
        router.post("/v2/notifications/:environment") { request, _ -> Response in
            let requestID = UUID().uuidString.lowercased()
            let body = try await request.body.collect(upTo: maximumBodySize)
            let bytes = Data(buffer: body, byteTransferStrategy: .noCopy)
            guard let key = PartitionKey.peek(body: bytes, version: 2) else { return Response(status: .badRequest) }
            let headers = RawNotificationHeaders(
                version: 2,
                environment: .sandbox,
                app: app,
                receivedAt: Date(),
                requestID: requestID,
                source: .ingress
            )
            let message = headers.message(body: body, key: key, topic: rawTopic)
            var response = Response(status: .ok)
            response.headers[HTTPField.Name("X-Request-ID")!] = requestID
            // Keeps the message alive to here, as the real ingress's produce does.
            withExtendedLifetime(message) {}
            return response
        }
        let host = configuration.host
        let port = configuration.port
        application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "asnp"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    func run() async throws {
        try await application.run()
    }
}
