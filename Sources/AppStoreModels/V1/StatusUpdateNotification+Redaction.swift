#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension StatusUpdateNotification {
    /// What a redacted `password` value reads.
    public static let redactedPassword = "<redacted>"

    /// The body with the value of every top-level `password` member replaced by `"<redacted>"`, every other byte
    /// kept as it was; a body without one (every V2 body) comes back unchanged.
    ///
    /// V1 bodies carry the app's shared secret in clear; this keeps it out of tables, dead-letter topics and logs.
    /// Member names are compared after JSON unescaping (`"pass\u0077ord"` is `password` to a JSON decoder too).
    /// A body that stops being JSON part-way is redacted up to that point.
    public static func redactingPassword(in body: [UInt8]) -> [UInt8] {
        var scanner = TopLevelMemberScanner(bytes: body)
        let ranges = scanner.valueRanges(ofMember: "password")
        guard !ranges.isEmpty else { return body }
        var redacted = body
        for range in ranges.reversed() {
            redacted.replaceSubrange(range, with: Array("\"\(redactedPassword)\"".utf8))
        }
        return redacted
    }
}

/// Finds the byte ranges of the values of a top-level object's members, without decoding the rest.
private struct TopLevelMemberScanner {
    let bytes: [UInt8]
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
