#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What PostgreSQL's `text` and `jsonb` cannot hold: U+0000. `text` refuses the character, `jsonb` the escape
/// `\u0000` in a string. Byte scans: they run over every stored body.
package enum PostgresText {
    /// Whether the text holds U+0000.
    package static func containsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { $0.contains(0) }
    }

    /// The text with each U+0000 replaced by U+FFFD, which a `text` column holds.
    package static func replacingNUL(_ text: String) -> String {
        guard containsNUL(text) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 })
        return String(scalars)
    }

    /// Whether JSON text holds the escape `\u0000` (a backslash that is itself escaped does not start one).
    package static func containsEscapedNUL(json: [UInt8]) -> Bool {
        json.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return false }
            var start = 0
            // memchr: most decoded JSON has few backslashes or none.
            while start < bytes.count,
                let found = memchr(base + start, Int32(UInt8(ascii: "\\")), bytes.count - start)
            {
                let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if index + 6 <= bytes.count, bytes[index + 1] == UInt8(ascii: "u"),
                    bytes[(index + 2)..<(index + 6)].allSatisfy({ $0 == UInt8(ascii: "0") })
                {
                    return true
                }
                start = index + 2
            }
            return false
        }
    }
}
