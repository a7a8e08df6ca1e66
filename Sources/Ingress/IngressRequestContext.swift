import Hummingbird
import NIOCore

/// The request context of the ingress: Hummingbird's, plus the peer's address for the allow-list.
public struct IngressRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer: Apple, or a proxy in front of the ingress.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
