import Hummingbird
import NIOCore
import Prometheus

/// The probe and scrape routes of every role's ``StatusServer`` (the ingress's, the worker's, the reconciler's),
/// written once:
///
/// - `GET /health/live`: 200 while `live()` says nothing is wrong, else 503 with the reason (restart me).
/// - `GET /health/ready`: 200 while `ready()` says nothing is wrong, else 503 with the reason.
/// - `GET /metrics`: `beforeScrape()` (to sample gauges), then everything in the registry, in Prometheus' text format.
package enum HealthRoutes {
    /// The routes, to mount with `router.addRoutes(_:)`.
    ///
    /// - Parameters:
    ///   - live: nil when live, else why not.
    ///   - ready: nil when ready, else why not.
    package static func collection<Context: RequestContext>(
        context: Context.Type,
        registry: PrometheusCollectorRegistry,
        live: @escaping @Sendable () async -> String? = { nil },
        ready: @escaping @Sendable () async -> String?,
        beforeScrape: @escaping @Sendable () async -> Void = {}
    ) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.get("/health/live") { _, _ in
            await probe(live, okText: "live")
        }
        routes.get("/health/ready") { _, _ in
            await probe(ready, okText: "ready")
        }
        routes.get("/metrics") { _, _ in
            await beforeScrape()
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return response(.ok, "text/plain; version=0.0.4; charset=utf-8", ByteBuffer(bytes: bytes))
        }
        return routes
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
