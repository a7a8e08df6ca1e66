import AppStoreTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import Ingress

@Suite("Ingress shutdown: a connection accepted as the server stops")
struct IngressShutdownRaceTests {
    @Test(
        "A connection the server never hands over (dropped by an ended accept stream) is closed, where its async channel dropped unclosed would stop the process as it became active"
    )
    func droppedConnection() async throws {
        let channel = NIOAsyncTestingChannel()
        try await channel.eventLoop.submit {
            // Made and dropped as the server's ended accept stream drops it.
            _ = IngressConnection(
                try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                    wrappingChannelSynchronously: channel,
                    configuration: .init(isOutboundHalfClosureEnabled: true)
                )
            )
        }.get()
        // Active only now, as an accepted socket becomes: the moment an unclosed writer stops the process. (The
        // connection may have been closed already, which refuses this.)
        try? await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080))
        // Closed by the connection's own executeThenClose.
        #expect(await finishes(within: .seconds(60)) { try? await channel.closeFuture.get() })
        #expect(try await !channel.eventLoop.submit { channel.isActive }.get())
    }
}
