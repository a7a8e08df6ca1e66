/// Where a ``StatusServer`` listens.
public struct StatusServerConfiguration: Sendable, Hashable {
    /// The address to bind. Default `0.0.0.0` (probes and scrapes come from outside the container).
    public var host = "0.0.0.0"
    /// The port; 0 picks a free one (tests). Default 9090.
    public var port = 9090

    /// The defaults above.
    public init() {}

    /// Listening on `host:port`.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}
