import Hummingbird
import NIOCore

/// The request context of the ingress: Hummingbird's, plus the peer's address for the allow-list.
package struct IngressRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The TCP peer: Apple, or a proxy in front of the ingress.
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
