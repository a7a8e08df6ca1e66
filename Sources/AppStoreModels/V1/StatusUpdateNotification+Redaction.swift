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
        // As far as the body is JSON: a body that breaks off still has its password redacted.
        var scanner = JSONMemberScanner(body, objectAt: body.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0)
        var ranges: [Range<Int>] = []
        while let member = scanner.next() {
            if member.name == "password" { ranges.append(member.value) }
        }
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
