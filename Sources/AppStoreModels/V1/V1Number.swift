/// A V1 value Apple's reference declares a number (`expiration_intent`) while V1 sends most values as strings: it
/// decodes from either, so a body carrying the number is read rather than rejected, and keeps its text.
public struct V1Number: Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The value as text: `"1"` whether Apple sent `1` or `"1"`.
    public let rawValue: String

    /// Wraps a value's text.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// The value as an integer, nil when it is not one.
    public var intValue: Int? { Int(rawValue) }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            rawValue = text
        } else if let integer = try? container.decode(Int64.self) {
            rawValue = String(integer)
        } else {
            rawValue = String(try container.decode(Double.self))
        }
    }

    /// Encoded as Apple's reference declares it, a number, when it is one.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let integer = Int64(rawValue) {
            try container.encode(integer)
        } else {
            try container.encode(rawValue)
        }
    }
}
