/// A flat JSON object that keeps its keys in insertion order, for output people read and diff.
package struct OrderedJSONObject {
    package enum Value {
        case string(String)
        case int(Int64)
        case null
        /// JSON text written as it is.
        case raw(String)

        package static func optionalString(_ value: String?) -> Value { value.map(Value.string) ?? .null }
        package static func optionalInt(_ value: Int64?) -> Value { value.map(Value.int) ?? .null }
    }

    private var members: [(String, Value)] = []

    package init() {}

    package mutating func append(_ key: String, _ value: Value) {
        members.append((key, value))
    }

    package var serialized: String {
        var text = "{"
        for (index, (key, value)) in members.enumerated() {
            if index > 0 { text += "," }
            text += Self.quoted(key) + ":"
            switch value {
            case .string(let string): text += Self.quoted(string)
            case .int(let int): text += String(int)
            case .null: text += "null"
            case .raw(let json): text += json
            }
        }
        return text + "}"
    }

    /// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped.
    package static func quoted(_ string: String) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
