import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

/// Stand-in HTTP servers of the tests (Apple's history endpoint, an OAuth token endpoint) on 127.0.0.1.
package enum LoopbackServer {
    /// Serves `router` on a free port of 127.0.0.1 while `body` runs, `body` getting the port; then shuts the server
    /// down gracefully, not cancelled, as swift-nio's maintainers advise for servers.
    package static func serve<Result: Sendable>(
        _ router: Router<BasicRequestContext>,
        server: HTTPServerBuilder = .http1(),
        label: String,
        _ body: (Int) async throws -> Result
    ) async throws -> Result {
        let port = AsyncStream<Int>.makeStream()
        var logger = Logger(label: label)
        logger.logLevel = .critical
        let application = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { port.continuation.yield($0.localAddress?.port ?? 0) },
            logger: logger
        )
        let services = ServiceGroup(services: [application], logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // A server that fails before it runs ends the wait for its port (its error then ends the group).
                defer { port.continuation.finish() }
                try await services.run()
            }
            var ports = port.stream.makeAsyncIterator()
            guard let bound = await ports.next() else {
                try await group.next()
                throw ServerStopped()
            }
            do {
                let result = try await body(bound)
                await services.triggerGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
        }
    }

    /// The server stopped before it listened.
    private struct ServerStopped: Error {}
}
