import AppStoreModels
import Crypto

/// The SHA-256 of a JWS header's base64url text (the bytes as they stand in the body, not the decoded JSON): the key
/// under which a header is stored once, however many bodies carry it.
package struct JWSHeaderDigest: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    package let bytes: [UInt8]

    /// The number of bytes in a digest.
    package static let byteCount = 32

    /// A digest as stored, or nil unless `bytes` holds exactly ``byteCount`` bytes.
    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    /// The digest of `header`, the base64url text of a JWS header.
    package init(of header: ArraySlice<UInt8>) {
        var hasher = SHA256()
        header.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        bytes = Array(hasher.finalize())
    }

    /// Lowercase hex, as PostgreSQL prints a `bytea`.
    package var description: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}

extension JWSHeaderDigest {
    /// The digest of `header` and its text as an array (for the table of headers), from a memo of recent headers:
    /// the packer meets the same few headers in every body, and comparing one costs a fraction of hashing it.
    static func remembered(_ header: ArraySlice<UInt8>) -> (digest: JWSHeaderDigest, text: [UInt8]) {
        header.withUnsafeBufferPointer { segment in
            if let known = memo.value(for: segment) { return known }
            let worked = (digest: JWSHeaderDigest(of: header), text: Array(header))
            memo.remember(worked, for: segment)
            return worked
        }
    }

    /// Whether `header` is one of the recent headers the memo holds (each one checked as base64url when first found).
    static func isRemembered(_ header: UnsafeBufferPointer<UInt8>) -> Bool {
        memo.value(for: header) != nil
    }

    private static let memo = JWSHeaderSegmentMemo<(digest: JWSHeaderDigest, text: [UInt8])>()
}
