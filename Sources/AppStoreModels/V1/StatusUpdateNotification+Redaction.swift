#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension StatusUpdateNotification {
    /// What a redacted `password` value reads.
    package static let redactedPassword = "<redacted>"

    /// The body with the value of every top-level `password` member replaced by `"<redacted>"`, every other byte
    /// kept as it was; a body without one (every V2 body) comes back unchanged.
    ///
    /// V1 bodies carry the app's shared secret in clear; this keeps it out of tables, dead-letter topics and logs.
    /// Member names are compared after JSON unescaping (`"pass\u0077ord"` is `password` to a JSON decoder too).
    /// A body that stops being JSON part-way is redacted up to that point.
    ///
    /// JSON decoders also read a body that starts with a UTF-8 byte order mark, and UTF-16 or UTF-32 text; such a
    /// body with a password is returned as UTF-8 with the password redacted (its other bytes change encoding).
    package static func redactingPassword(in body: [UInt8]) -> [UInt8] {
        if let text = wideText(body) {
            let utf8 = Array(text.utf8)
            let redacted = redactingPassword(in: utf8)
            return redacted == utf8 ? body : redacted
        }
        var scanner = TopLevelMemberScanner(bytes: body)
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        let ranges = scanner.valueRanges(ofMember: "password")
        guard !ranges.isEmpty else { return body }
        var redacted = body
        for range in ranges.reversed() {
            redacted.replaceSubrange(range, with: Array("\"\(redactedPassword)\"".utf8))
        }
        return redacted
    }
}

extension StatusUpdateNotification {
    /// The text of a UTF-16 or UTF-32 body (by byte order mark, or by JSON's NUL-byte pattern: its first
    /// character is ASCII), as JSON decoders detect it; nil for anything else.
    fileprivate static func wideText(_ body: [UInt8]) -> String? {
        guard body.count >= 4 else { return nil }
        let head = Array(body.prefix(4))
        let encoding: String.Encoding?
        switch (head[0], head[1], head[2], head[3]) {
        case (0x00, 0x00, 0xFE, 0xFF), (0x00, 0x00, 0x00, _): encoding = .utf32BigEndian
        case (0xFF, 0xFE, 0x00, 0x00), (_, 0x00, 0x00, 0x00): encoding = .utf32LittleEndian
        case (0xFE, 0xFF, _, _), (0x00, _, _, _): encoding = .utf16BigEndian
        case (0xFF, 0xFE, _, _), (_, 0x00, _, _): encoding = .utf16LittleEndian
        default: encoding = nil
        }
        guard let encoding, var text = String(bytes: body, encoding: encoding) else { return nil }
        if text.first == "\u{FEFF}" { text.removeFirst() }
        return text
    }
}

/// Finds the byte ranges of the values of a top-level object's members, without decoding the rest.
private struct TopLevelMemberScanner {
    let bytes: [UInt8]
    /// Where scanning starts (after a byte order mark), then where it is.
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func valueRanges(ofMember name: String) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        skipWhitespace()
        guard consume(UInt8(ascii: "{")) else { return [] }
        while true {
            skipWhitespace()
            guard let keyRange = skipString() else { return ranges }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { return ranges }
            skipWhitespace()
            let valueStart = index
            guard skipValue() else { return ranges }
            if memberName(bytes[keyRange]) == name {
                ranges.append(valueStart..<index)
            }
            skipWhitespace()
            guard consume(UInt8(ascii: ",")) else { return ranges }
        }
    }

    private func memberName(_ token: ArraySlice<UInt8>) -> String? {
        // Fast path: no escapes, the name is the bytes between the quotes.
        if !token.contains(UInt8(ascii: "\\")) {
            return String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
        }
        return try? JSONDecoder().decode(String.self, from: Data(token))
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
            index += 1
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
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                index += 1
                return start..<index
            default: index += 1
            }
        }
        return nil
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
            while index < bytes.count,
                ![UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[index])
            {
                index += 1
            }
            return index > start
        }
    }
}
