import Hummingbird
import Logging

/// Refuses (403) a notification from an address outside `ingress.allowedSources`, before anything else: such a
/// sender learns nothing about routes or apps. The address is the peer's, or the `X-Forwarded-For` entry a
/// trusted proxy added (``ClientAddress``). Without an allow-list everyone may post.
struct SenderAllowListMiddleware: RouterMiddleware {
    typealias Context = IngressRequestContext

    let allowedSources: [IPNetwork]
    let trustedProxies: [IPNetwork]
    let logger: Logger

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let client = ClientAddress.resolve(
            peer: context.remoteAddress?.ipAddress,
            forwardedFor: request.headers[values: .xForwardedFor],
            trustedProxies: trustedProxies
        )
        guard let client, allowedSources.contains(where: { $0.contains(client) }) else {
            logger.notice(
                "Refused a notification from an address outside the allow-list",
                metadata: [
                    "client.address": "\(client ?? "unknown")", "request.id": "\(context.requestID)",
                ]
            )
            throw IngressRefusal(.forbidden, "this address may not post notifications", requestID: context.requestID)
        }
        return try await next(request, context)
    }
}
