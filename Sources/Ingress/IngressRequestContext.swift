import Hummingbird
import NIOCore

/// The request context of the ingress: Hummingbird's, plus the peer's address for the allow-list and the id the
/// request is known by in logs, in the raw topic's headers and in the answer (`X-Request-ID`).
package struct IngressRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The TCP peer: Apple, or a proxy in front of the ingress.
    package let remoteAddress: SocketAddress?
    /// A fresh UUID, lowercased.
    package let requestID: String
    /// The connection, for closing it when a body does not arrive in time.
    let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
        requestID = RequestIdentifiers.next()
        channel = source.channel
    }
}
