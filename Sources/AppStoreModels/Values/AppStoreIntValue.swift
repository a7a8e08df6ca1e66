/// An integer value from a closed-but-growing vocabulary of Apple's (offer types, revocation reasons, statuses, ...).
///
/// Unknown future values decode and keep their raw integer, like ``AppStoreStringValue``.
public protocol AppStoreIntValue: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
where RawValue == Int {
    /// Wraps any raw value, known or not.
    init(rawValue: Int)
}

extension AppStoreIntValue {
    /// Wraps a literal, known value or not: `2` as an ``OfferType``.
    public init(integerLiteral value: Int) {
        self.init(rawValue: value)
    }

    /// Decodes the raw integer; any value is accepted.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int.self))
    }

    /// Encodes the raw value, exactly as Apple sent it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The raw value as text.
    public var description: String { String(rawValue) }
}
