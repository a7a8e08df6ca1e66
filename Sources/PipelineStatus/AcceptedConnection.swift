import HummingbirdCore
import NIOCore
import Synchronization

/// One accepted connection as a server hands it to its channel's `handle(value:logger:)`: the ingress's and the
/// status servers'.
///
/// A connection accepted just as the server stops (its accept stream already ended, swift-nio#3481) is never handed
/// over; an `NIOAsyncChannel` dropped without `executeThenClose` stops the process ("Deinited NIOAsyncWriter without
/// calling finish()"), which a full test run under load hit during an ingress shutdown. Such a connection is closed
/// through `executeThenClose` here instead.
package final class AcceptedConnection<Inbound: Sendable, Outbound: Sendable>: ServerChildChannelValue {
    private let asyncChannel: NIOAsyncChannel<Inbound, Outbound>
    private let handedOver = Atomic(false)

    package init(_ asyncChannel: NIOAsyncChannel<Inbound, Outbound>) {
        self.asyncChannel = asyncChannel
    }

    package var channel: any Channel { asyncChannel.channel }

    /// The connection's async channel, for the server to serve and close.
    package func handOver() -> NIOAsyncChannel<Inbound, Outbound> {
        handedOver.store(true, ordering: .relaxed)
        return asyncChannel
    }

    deinit {
        guard !handedOver.load(ordering: .relaxed) else { return }
        let asyncChannel = asyncChannel
        Task { try? await asyncChannel.executeThenClose { _, _ in } }
    }
}
