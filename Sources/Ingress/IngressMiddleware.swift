import Hummingbird
import Logging

/// Counts every answer by route and status, including the ones Hummingbird makes from errors (404, 413), and
/// turns a known path asked with the wrong method into 405 with `Allow`.
struct IngressMiddleware: RouterMiddleware {
    typealias Context = IngressRequestContext

    let metrics: IngressMetrics
    let pathToken: String?

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let route = Self.route(of: request.uri.path, pathToken: pathToken)
        do {
            let response = try await next(request, context)
            metrics.countRequest(route: route.label, status: response.status.code)
            return response
        } catch let error as any HTTPResponseError {
            var status = error.status
            if status == .notFound, let allowed = route.allowedMethod, request.method != allowed {
                status = .methodNotAllowed
                metrics.countRequest(route: route.label, status: status.code)
                throw HTTPError(status, headers: [.allow: allowed.rawValue], message: "use \(allowed.rawValue)")
            }
            metrics.countRequest(route: route.label, status: status.code)
            throw error
        } catch {
            metrics.countRequest(route: route.label, status: 500)
            throw error
        }
    }

    /// A path's route for metrics, and the method it takes when it is one of ours.
    static func route(of path: String, pathToken: String?) -> (label: String, allowedMethod: HTTPRequest.Method?) {
        var segments = path.split(separator: "/")
        if pathToken != nil, segments.count >= 4 { segments.removeFirst() }
        switch segments.first {
        case "v1", "v2":
            let label = String(segments[0])
            let isNotificationPath = (3...4).contains(segments.count) && segments[1] == "notifications"
            return (label, isNotificationPath ? .post : nil)
        case "health":
            return ("health", segments.count == 2 && ["live", "ready"].contains(segments[1]) ? .get : nil)
        case "metrics":
            return ("metrics", segments.count == 1 ? .get : nil)
        default:
            return ("other", nil)
        }
    }
}
