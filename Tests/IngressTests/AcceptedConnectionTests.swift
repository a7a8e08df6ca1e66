import AppStoreTestSupport
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import PipelineStatus
import Testing

@Suite("Servers stopping: a connection accepted as the server stops", .tags(.fast))
struct AcceptedConnectionTests {
    /// Becomes active as an accepted socket does (the moment an unclosed writer stops the process), then expects the
    /// connection's own `executeThenClose` to close it. (It may have been closed already, which refuses the connect.)
    static func expectClosed(_ channel: NIOAsyncTestingChannel) async throws {
        try? await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080))
        #expect(await finishes(within: .seconds(60)) { try? await channel.closeFuture.get() })
        #expect(try await !channel.eventLoop.submit { channel.isActive }.get())
    }

    @Test(
        "An ingress connection the server never hands over (dropped by an ended accept stream) is closed, where its async channel dropped unclosed would stop the process as it became active"
    )
    func droppedIngressConnection() async throws {
        let channel = NIOAsyncTestingChannel()
        try await channel.eventLoop.submit {
            // Made and dropped as the server's ended accept stream drops it.
            _ = AcceptedConnection(
                try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                    wrappingChannelSynchronously: channel,
                    configuration: .init(isOutboundHalfClosureEnabled: true)
                )
            )
        }.get()
        try await Self.expectClosed(channel)
    }

    @Test("A status server's connection set up and never handed over (a probe as the server stops) is closed too")
    func droppedStatusConnection() async throws {
        let channel = NIOAsyncTestingChannel()
        let status = AcceptedHTTP1Channel { _, _, _ in }
        // The status server's own setup (Hummingbird's HTTP/1.1 handlers), its connection dropped unhandled.
        _ = try await channel.eventLoop.flatSubmit { status.setup(channel: channel, logger: Logger(label: "test")) }
            .get()
        try await Self.expectClosed(channel)
    }
}
