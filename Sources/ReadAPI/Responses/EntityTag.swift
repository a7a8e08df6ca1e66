import AppStoreModels
import Crypto

/// Strong entity tags over an answer's bytes, and `If-None-Match` (RFC 9110, 8.8.3 and 13.1.2).
///
/// Over the bytes rather than a row version: access is judged against the clock, so the same row answers differently
/// once its `entitled_until` passes.
enum EntityTag {
    /// `"` + 22 base64url characters of the body's SHA-256 (128 bits) + `"`.
    static func of(_ body: [UInt8]) -> String {
        "\"" + Base64URL.encode(SHA256.hash(data: body).prefix(16)) + "\""
    }

    /// Whether `ifNoneMatch` (a header's values, comma-separated tags or `*`) matches `tag` by the weak comparison
    /// `If-None-Match` uses: `W/` is ignored.
    static func matches(ifNoneMatch values: [String], _ tag: String) -> Bool {
        for value in values {
            for candidate in value.split(separator: ",") {
                var candidate = candidate.trimmingSpaces
                if candidate == "*" { return true }
                if candidate.hasPrefix("W/") { candidate = candidate.dropFirst(2) }
                if candidate == tag[...] { return true }
            }
        }
        return false
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
