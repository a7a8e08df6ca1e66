/// Who sent a request: the TCP peer, or, when the peer is a trusted proxy, the address it forwarded for.
enum ClientAddress {
    /// The client's address as text, or nil when the peer's address is unknown (a Unix socket).
    ///
    /// `X-Forwarded-For` is read only from a trusted proxy, right to left, skipping further trusted proxies: the
    /// first address that is not one is the client. Addresses to its left could have been written by anyone.
    static func resolve(peer: String?, forwardedFor: [String], trustedProxies: [IPNetwork]) -> String? {
        guard let peer else { return nil }
        func isTrusted(_ address: String) -> Bool { trustedProxies.contains { $0.contains(address) } }
        guard isTrusted(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { String($0).trimmingSpaces }
            .filter { !$0.isEmpty }
        for hop in hops.reversed() where !isTrusted(hop) {
            return hop
        }
        return hops.first ?? peer
    }
}
