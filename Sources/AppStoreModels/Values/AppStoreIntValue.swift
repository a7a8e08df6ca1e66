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
    public init(integerLiteral value: Int) {
        self.init(rawValue: value)
    }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { String(rawValue) }
}
