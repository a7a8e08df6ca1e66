/// Where a ``StatusServer`` listens.
package struct StatusServerConfiguration: Sendable, Hashable {
    /// The address to bind. Default `0.0.0.0` (probes and scrapes come from outside the container).
    package var host = "0.0.0.0"
    /// The port; 0 picks a free one (tests). Default 9090.
    package var port = 9090

    /// The defaults above.
    package init() {}

    /// Listening on `host:port`.
    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}
