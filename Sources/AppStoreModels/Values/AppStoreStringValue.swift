/// A string value from a closed-but-growing vocabulary of Apple's (notification types, subtypes, environments, ...).
///
/// Apple adds values every year, so these are structs with static constants rather than enums: any value decodes,
/// unknown ones keep their raw string, and re-encoding writes back exactly what Apple sent.
public protocol AppStoreStringValue: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
where RawValue == String {
    /// Wraps any raw value, known or not.
    init(rawValue: String)
}

extension AppStoreStringValue {
    /// Wraps a literal, known value or not: `"SUBSCRIBED"` as a ``NotificationType``.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// Decodes the raw string; any value is accepted.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the raw value, exactly as Apple sent it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The raw value.
    public var description: String { rawValue }
}
