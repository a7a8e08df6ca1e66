import Hummingbird

/// Counts every answer of the router by matched route (Hummingbird's `endpointPath`, such as `/health/ready`;
/// `unmatched` for paths no route takes) and status, including the answers Hummingbird makes from errors (404); and
/// turns a known path asked with the wrong method, a notification path included, into 405 with `Allow`. The
/// notification routes' own answers are counted by ``NotificationRequestHandler``, under the same metric.
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
            metrics.countRequest(route: Self.route(context), status: response.status.code)
            return response
        } catch let error as any HTTPResponseError {
            if error.status == .notFound, Self.route(context) == Self.unmatchedRoute,
                let allowed = Self.allowedMethod(path: request.uri.path, pathToken: pathToken),
                request.method != allowed
            {
                metrics.countRequest(route: Self.unmatchedRoute, status: HTTPResponse.Status.methodNotAllowed.code)
                throw HTTPError(
                    .methodNotAllowed,
                    headers: [.allow: allowed.rawValue],
                    message: "use \(allowed.rawValue)"
                )
            }
            metrics.countRequest(route: Self.route(context), status: error.status.code)
            throw error
        } catch {
            metrics.countRequest(route: Self.route(context), status: 500)
            throw error
        }
    }

    /// The matched route once the router resolved it (the endpoint path is shared with the router's copy of the
    /// context), else ``unmatchedRoute``.
    static func route(_ context: Context) -> String {
        guard let path = context.endpointPath, path != "NotFound" else { return unmatchedRoute }
        return path
    }

    /// The method a path of one of the ingress's routes takes, nil for paths no route has.
    static func allowedMethod(path: String, pathToken: String?) -> HTTPRequest.Method? {
        if NotificationRoute(path: path[...], tokened: pathToken != nil) != nil { return .post }
        let segments = path.split(separator: "/")
        switch segments.first {
        case "health":
            return segments.count == 2 && ["live", "ready"].contains(segments[1]) ? .get : nil
        case "metrics":
            return segments.count == 1 ? .get : nil
        default:
            return nil
        }
    }
}
