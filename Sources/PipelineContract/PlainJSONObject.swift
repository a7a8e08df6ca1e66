/// A few members of a JSON object, read in place without decoding the rest: for hot paths that need one or two
/// fields of large documents (the ingress reads a key from every body it accepts).
///
/// It reads *plain* JSON only: ASCII, strings without escapes, nesting at most ``maximumDepth`` deep, each wanted
/// member once. Anything else, invalid JSON included, makes it give up (nil), and the caller decodes with
/// `JSONDecoder` instead. So when it answers, the document is valid JSON and the answer is what a decoder reads.
/// Everything Apple sends is plain.
package struct PlainJSONObject {
    /// A member's value: where a string's characters or an object's text lie, or that it is something else.
    package enum Value: Equatable, Sendable {
        /// The characters between the quotes (no escapes, so they are the string).
        case string(Range<Int>)
        /// The object's text, braces included.
        case object(Range<Int>)
        /// A number, array, `true`, `false` or `null`.
        case other
    }

    /// Deeper documents are left to `JSONDecoder`.
    package static let maximumDepth = 32

    /// The values of the members named `keys` of the object `bytes` holds (nil for a member it lacks), in `keys`
    /// order; nil when `bytes` is not plain JSON holding an object, or names a wanted member twice.
    package static func members(
        of bytes: UnsafeBufferPointer<UInt8>,
        named keys: [String]
    ) -> [Value?]? {
        members(of: bytes, at: keys.map { [$0] })
    }

    /// The values at `paths` in the object `bytes` holds, each path naming a member and the members of objects
    /// below it (`["data", "signedTransactionInfo"]`), in one reading of the text; nil for a path that is absent or
    /// passes through a value that is not an object. Nil when `bytes` is not plain JSON holding an object, or an
    /// object on a wanted path names a wanted member twice.
    package static func members(of bytes: UnsafeBufferPointer<UInt8>, at paths: [[String]]) -> [Value?]? {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.peek == UInt8(ascii: "{") else { return nil }
        var found = [Value?](repeating: nil, count: paths.count)
        let wanted = paths.enumerated().compactMap { slot, path in
            path.isEmpty ? nil : Wanted(path: path.map { Array($0.utf8) }[...], slot: slot)
        }
        guard reader.object(depth: 1, wanted: wanted, found: &found) != nil else { return nil }
        reader.skipWhitespace()
        return reader.isAtEnd ? found : nil
    }

    /// A path still to follow from the object being read, and where its value goes.
    private struct Wanted {
        var path: ArraySlice<[UInt8]>
        var slot: Int
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var isAtEnd: Bool { index == bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// One value; its kind, or nil when it is not plain JSON. When it is an object, the paths in `below` are
        /// followed into it.
        mutating func value(depth: Int, below: [Wanted] = [], found: inout [Value?]) -> Value? {
            guard let first = peek else { return nil }
            switch first {
            case UInt8(ascii: "\""):
                return string().map { .string($0) }
            case UInt8(ascii: "{"):
                return object(depth: depth + 1, wanted: below, found: &found).map { .object($0) }
            case UInt8(ascii: "["):
                return array(depth: depth + 1) ? .other : nil
            case UInt8(ascii: "t"):
                return literal("true") ? .other : nil
            case UInt8(ascii: "f"):
                return literal("false") ? .other : nil
            case UInt8(ascii: "n"):
                return literal("null") ? .other : nil
            default:
                return number() ? .other : nil
            }
        }

        /// An object starting at `{`; its text. Records the values at the `wanted` paths in `found`.
        mutating func object(depth: Int, wanted: [Wanted], found: inout [Value?]) -> Range<Int>? {
            guard depth <= PlainJSONObject.maximumDepth else { return nil }
            let start = index
            index += 1
            skipWhitespace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return start..<index
            }
            var seen = [Bool](repeating: false, count: wanted.count)
            while true {
                guard peek == UInt8(ascii: "\""), let key = string() else { return nil }
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { return nil }
                index += 1
                skipWhitespace()
                var below: [Wanted] = []
                var slots: [Int] = []
                for (position, wanted) in wanted.enumerated() where equal(wanted.path.first!, key) {
                    // Decoders differ on which of two equal keys wins: leave that to the real one.
                    guard !seen[position] else { return nil }
                    seen[position] = true
                    if wanted.path.count == 1 {
                        slots.append(wanted.slot)
                    } else {
                        below.append(Wanted(path: wanted.path.dropFirst(), slot: wanted.slot))
                    }
                }
                guard let member = value(depth: depth, below: below, found: &found) else { return nil }
                for slot in slots { found[slot] = member }
                guard let isClosed = commaOrEnd(closing: UInt8(ascii: "}")) else { return nil }
                if isClosed { return start..<index }
            }
        }

        mutating func array(depth: Int) -> Bool {
            guard depth <= PlainJSONObject.maximumDepth else { return false }
            index += 1
            skipWhitespace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return true
            }
            var none: [Value?] = []
            while true {
                guard value(depth: depth, found: &none) != nil, let isClosed = commaOrEnd(closing: UInt8(ascii: "]"))
                else {
                    return false
                }
                if isClosed { return true }
            }
        }

        /// After a member or an element: a comma (false: more follow) or `closing` (true); nil for anything else.
        mutating func commaOrEnd(closing: UInt8) -> Bool? {
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
                return false
            case closing:
                index += 1
                return true
            default:
                return nil
            }
        }

        /// A string starting at its quote; the characters between the quotes. Nil at an escape, a control
        /// character or a non-ASCII byte (not plain), or when it does not end.
        mutating func string() -> Range<Int>? {
            index += 1
            let start = index
            // 8 bytes at a time while none of them needs a look (a long base64 string is most of a body).
            while index + 8 <= bytes.count,
                !Self.needsLook(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
            }
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return start..<(index - 1)
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return nil }
                index += 1
            }
            return nil
        }

        /// Whether any of the 8 bytes of `word` is a quote, a backslash, a control character or not ASCII (the
        /// classic has-zero-byte and has-less-than tests; they never miss, and a rare false alarm only means the
        /// bytes are looked at one by one).
        static func needsLook(_ word: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highBits: UInt64 = 0x8080_8080_8080_8080
            func hasByteBelow(_ limit: UInt64, _ value: UInt64) -> Bool {
                (value &- ones &* limit) & ~value & highBits != 0
            }
            return word & highBits != 0 || hasByteBelow(0x20, word)
                || hasByteBelow(1, word ^ (ones &* UInt64(UInt8(ascii: "\""))))
                || hasByteBelow(1, word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        }

        /// A number as RFC 8259 writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() -> Bool {
            if peek == UInt8(ascii: "-") { index += 1 }
            guard let first = peek, isDigit(first) else { return false }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard let digit = peek, isDigit(digit) else { return false }
                skipDigits()
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard let digit = peek, isDigit(digit) else { return false }
                skipDigits()
            }
            return true
        }

        mutating func skipDigits() {
            while let byte = peek, isDigit(byte) { index += 1 }
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        func equal(_ key: [UInt8], _ range: Range<Int>) -> Bool {
            key.count == range.count && key.withUnsafeBufferPointer { $0.elementsEqual(bytes[range]) }
        }
    }
}
