/// The App Store Server Notifications format a body is in.
public struct NotificationVersion: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The format version number.
    public let rawValue: Int

    /// Wraps a version number.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `V1` or `V2`.
    public var description: String { "V\(rawValue)" }

    /// Legacy JSON with a shared-secret `password`.
    public static let v1 = NotificationVersion(rawValue: 1)
    /// A signed JWS in `{"signedPayload": ...}`.
    public static let v2 = NotificationVersion(rawValue: 2)
}
