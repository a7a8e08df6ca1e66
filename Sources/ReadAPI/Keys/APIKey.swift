/// One API key as the keys file describes it: its id, the SHA-256 of the key (never the key itself), what it may
/// read, and its rate.
package struct APIKey: Sendable, Hashable {
    /// The key's name in logs and metrics, for example `billing-backend-2026-11`; never secret.
    package var id: String
    /// SHA-256 of the key's UTF-8 bytes.
    package var digest: [UInt8]
    /// The apps and environments it may read; a request for any other is answered as if nothing were there.
    package var scopes: Set<APIScope>
    /// Sustained requests per second on one replica; nil: the API's default.
    package var requestsPerSecond: Double?
    /// Requests at once after a quiet spell; nil: the API's default.
    package var burst: Double?

    package init(
        id: String,
        digest: [UInt8],
        scopes: Set<APIScope>,
        requestsPerSecond: Double? = nil,
        burst: Double? = nil
    ) {
        self.id = id
        self.digest = digest
        self.scopes = scopes
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
    }

    /// Whether `id` can name a key: 1 to 64 of ASCII letters, digits, `.`, `-` and `_` (it is a metric label).
    package static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}
