import Hummingbird

/// With `ingress.pathToken` set, the notification routes sit behind a secret first segment
/// (`/{token}/v2/notifications/...`); any other first segment gets the 404 of a route that does not exist.
struct PathTokenMiddleware: RouterMiddleware {
    typealias Context = IngressRequestContext

    static let parameter = "token"

    let token: String

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let given = context.parameters.get(Self.parameter), Self.constantTimeEquals(given, token) else {
            throw IngressRefusal(.notFound, "no such route", requestID: context.requestID)
        }
        return try await next(request, context)
    }

    /// Compares without an early exit, so the time taken says nothing about how much of the secret matched.
    static func constantTimeEquals(_ given: String, _ expected: String) -> Bool {
        let given = Array(given.utf8)
        let expected = Array(expected.utf8)
        var difference = given.count ^ expected.count
        for index in expected.indices {
            difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
        }
        return difference == 0
    }
}
