import Hummingbird

/// Answers what the notification handler leaves to the router, which on the public port has no routes: every such
/// request is counted under the route ``unmatchedRoute`` with its status (404, from Hummingbird's error), and a
/// notification path asked with the wrong method becomes 405 with `Allow`. The probes and `/metrics` are on the
/// status port, so here they are unknown paths like any other. The notification routes' own answers are counted by
/// ``NotificationRequestHandler``, under the same metric.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    /// The route label of a request no route took.
    static let unmatchedRoute = "unmatched"

    let metrics: IngressMetrics
    let pathToken: String?

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            let response = try await next(request, context)
            metrics.countRequest(route: Self.unmatchedRoute, status: response.status.code)
            return response
        } catch let error as any HTTPResponseError {
            let isNotificationPath = NotificationRoute(path: request.uri.path[...], tokened: pathToken != nil) != nil
            if error.status == .notFound, isNotificationPath, request.method != .post {
                metrics.countRequest(route: Self.unmatchedRoute, status: HTTPResponse.Status.methodNotAllowed.code)
                throw HTTPError(.methodNotAllowed, headers: [.allow: "POST"], message: "use POST")
            }
            metrics.countRequest(route: Self.unmatchedRoute, status: error.status.code)
            throw error
        } catch {
            metrics.countRequest(route: Self.unmatchedRoute, status: 500)
            throw error
        }
    }
}
