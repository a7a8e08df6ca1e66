#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Walks the members of one JSON object in place, without decoding their values: each member's name and where it
/// and its value lie, so that a caller can rewrite a few members and keep every other byte as it was.
///
/// It is lenient about what it skips (the insides of nested values are not checked) and strict about the object
/// it walks: ``next()`` answers nil at the object's end (then ``isClosed`` is true) or at the first byte that is not
/// JSON (``isClosed`` stays false). Use it on documents a JSON decoder has read already, or to redact as far as a
/// body is JSON.
package struct JSONMemberScanner {
    /// A member of the object.
    package struct Member: Sendable, Equatable {
        /// The name after JSON unescaping; nil when its escapes are not valid.
        package var name: String?
        /// From the name's opening quote to the value's last byte.
        package var range: Range<Int>
        /// The value's bytes (quotes included for a string, braces for an object).
        package var value: Range<Int>
    }

    private let bytes: [UInt8]
    private var index: Int
    private var started = false
    /// Whether the object's closing brace was reached.
    package private(set) var isClosed = false

    /// A scanner of the object at `start` (after any whitespace) of `bytes`.
    package init(_ bytes: [UInt8], objectAt start: Int = 0) {
        self.bytes = bytes
        self.index = start
    }

    /// Where scanning stands: after the closing brace once ``isClosed``.
    package var position: Int { index }

    /// The next member; nil at the object's end or at the first byte that is not JSON.
    package mutating func next() -> Member? {
        guard !isClosed else { return nil }
        skipWhitespace()
        if !started {
            guard consume(UInt8(ascii: "{")) else { return nil }
            started = true
            skipWhitespace()
            if consume(UInt8(ascii: "}")) {
                isClosed = true
                return nil
            }
        } else {
            if consume(UInt8(ascii: "}")) {
                isClosed = true
                return nil
            }
            guard consume(UInt8(ascii: ",")) else { return nil }
            skipWhitespace()
        }
        guard let keyRange = skipString() else { return nil }
        skipWhitespace()
        guard consume(UInt8(ascii: ":")) else { return nil }
        skipWhitespace()
        let valueStart = index
        guard skipValue() else { return nil }
        return Member(name: Self.string(bytes[keyRange]), range: keyRange.lowerBound..<index, value: valueStart..<index)
    }

    /// The text of a string token (quotes included) after JSON unescaping; nil when it is not a valid one.
    package static func string(_ token: ArraySlice<UInt8>) -> String? {
        // Fast path: no escapes, the text is the bytes between the quotes.
        if !token.contains(UInt8(ascii: "\\")) {
            return String(validating: token.dropFirst().dropLast(), as: UTF8.self)
        }
        return try? JSONDecoder().decode(String.self, from: Data(token))
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Skips a string token and returns its range, quotes included.
    private mutating func skipString() -> Range<Int>? {
        let start = index
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let contentStart = index
        // memchr to each quote (a JWS string is kilobytes long), then: escaped when an odd number of backslashes
        // precede it.
        let end = bytes.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress else { return nil }
            var position = contentStart
            while position < buffer.count,
                let found = memchr(base + position, Int32(UInt8(ascii: "\"")), buffer.count - position)
            {
                let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var backslashes = 0
                while quote - backslashes - 1 >= contentStart, buffer[quote - backslashes - 1] == UInt8(ascii: "\\") {
                    backslashes += 1
                }
                if backslashes % 2 == 0 { return quote + 1 }
                position = quote + 1
            }
            return nil
        }
        guard let end else {
            index = bytes.count
            return nil
        }
        index = end
        return start..<end
    }

    /// Skips one value of any kind: string, object or array (nested, strings respected), number or literal.
    private mutating func skipValue() -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return skipString() != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard skipString() != nil else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return true
                    }
                default: break
                }
                index += 1
            }
            return false
        default:
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D: return index > start
                default: index += 1
                }
            }
            return index > start
        }
    }
}
