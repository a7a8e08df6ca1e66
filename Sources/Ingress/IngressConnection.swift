import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import Synchronization

/// One accepted connection as the server hands it to ``IngressChannel/handle(value:logger:)``.
///
/// A connection accepted just as the server stops (its accept stream already ended, swift-nio#3481) is never handed
/// over; an `NIOAsyncChannel` dropped without `executeThenClose` stops the process ("Deinited NIOAsyncWriter without
/// calling finish()"), which a full test run under load hit during an ingress shutdown. Such a connection is closed
/// through `executeThenClose` here instead.
final class IngressConnection: ServerChildChannelValue {
    private let asyncChannel: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>
    private let handedOver = Atomic(false)

    init(_ asyncChannel: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) {
        self.asyncChannel = asyncChannel
    }

    var channel: any Channel { asyncChannel.channel }

    /// The connection's async channel, for the server to serve and close.
    func handOver() -> NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart> {
        handedOver.store(true, ordering: .relaxed)
        return asyncChannel
    }

    deinit {
        guard !handedOver.load(ordering: .relaxed) else { return }
        let asyncChannel = asyncChannel
        Task { try? await asyncChannel.executeThenClose { _, _ in } }
    }
}
