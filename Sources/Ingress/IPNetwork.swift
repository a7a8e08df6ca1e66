#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address range in CIDR notation (`17.0.0.0/8`, `2001:db8::/32`), or one address (`10.1.2.3`).
///
/// Used for the source allow-list and the trusted proxies. IPv4 addresses seen as IPv4-mapped IPv6 addresses
/// (`::ffff:17.1.2.3`, as a dual-stack socket reports them) match IPv4 ranges.
package struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's address bytes: 4 for IPv4, 16 for IPv6.
    let address: [UInt8]
    /// The number of leading bits that must match.
    let prefixLength: Int

    /// Parses `17.0.0.0/8`, `::1/128` or a bare address; nil when it is neither.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPNetwork.parseAddress(String(parts[0])) else { return nil }
        let maximum = address.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...maximum).contains(length), parts[1].allSatisfy(\.isASCII) else {
                return nil
            }
            prefixLength = length
        } else {
            prefixLength = maximum
        }
        self.address = address
    }

    package var description: String {
        let text: String
        if address.count == 4 {
            text = address.map(String.init).joined(separator: ".")
        } else {
            text = stride(from: 0, to: 16, by: 2).map {
                String(UInt16(address[$0]) << 8 | UInt16(address[$0 + 1]), radix: 16)
            }
            .joined(separator: ":")
        }
        return "\(text)/\(prefixLength)"
    }

    /// Whether the textual address `text` lies in this network; false for text that is not an address.
    package func contains(_ text: String) -> Bool {
        guard var candidate = IPNetwork.parseAddress(text) else { return false }
        if candidate.count == 16, address.count == 4, candidate.prefix(12).elementsEqual(IPNetwork.mappedPrefix) {
            candidate = Array(candidate.suffix(4))
        }
        guard candidate.count == address.count else { return false }
        var remaining = prefixLength
        for index in address.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            guard candidate[index] & mask == address[index] & mask else { return false }
            remaining -= bits
        }
        return true
    }

    private static let mappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    /// The bytes of an IPv4 or IPv6 address (`inet_pton`), ignoring an IPv6 zone (`fe80::1%eth0`).
    static func parseAddress(_ text: String) -> [UInt8]? {
        let trimmed = text.trimmingSpaces
        if trimmed.contains(":") {
            let withoutZone = trimmed.split(separator: "%", maxSplits: 1).first.map(String.init) ?? trimmed
            var storage = in6_addr()
            guard inet_pton(AF_INET6, withoutZone, &storage) == 1 else { return nil }
            return withUnsafeBytes(of: &storage) { Array($0) }
        }
        var storage = in_addr()
        guard inet_pton(AF_INET, trimmed, &storage) == 1 else { return nil }
        return withUnsafeBytes(of: &storage) { Array($0) }
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
