import PipelineContract

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes one JSON object member by member, splicing in JSON PostgreSQL wrote (a state row, a notification) as it
/// is: parsing it to write it again would cost more than the read.
struct JSONWriter {
    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]

    init() {}

    /// The object, closed.
    func finished() -> [UInt8] { bytes + [UInt8(ascii: "}")] }

    mutating func string(_ key: String, _ value: String?) {
        member(key)
        if let value { Self.appendString(value, to: &bytes) } else { bytes += Array("null".utf8) }
    }

    mutating func bool(_ key: String, _ value: Bool?) {
        member(key)
        bytes += Array((value.map { $0 ? "true" : "false" } ?? "null").utf8)
    }

    mutating func int(_ key: String, _ value: Int) {
        member(key)
        bytes += Array(String(value).utf8)
    }

    /// An instant as RFC 3339 in UTC with milliseconds, or null.
    mutating func date(_ key: String, _ value: Date?) {
        string(key, value.map(RFC3339Timestamp.string(from:)))
    }

    mutating func strings(_ key: String, _ values: [String]) {
        member(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendString(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `values`, each JSON text already, as an array.
    mutating func rawArray(_ key: String, _ values: [some Collection<UInt8>]) {
        member(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += value
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `value`, JSON text already.
    mutating func raw(_ key: String, _ value: some Collection<UInt8>) {
        member(key)
        bytes += value
    }

    private mutating func member(_ key: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        Self.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped (RFC 8259, section 7).
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0a: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0d: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case ..<0x20:
                bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
