/// The HTTP body Apple posts for an App Store Server Notification V2: one signed payload (JWS compact serialization).
public struct ResponseBodyV2: Sendable, Hashable, Codable {
    /// The notification as a JWS, signed by the App Store; decodes to ``ResponseBodyV2DecodedPayload``.
    public var signedPayload: String

    /// Creates a value; fields left out are absent, as when Apple omits them.
    public init(signedPayload: String) {
        self.signedPayload = signedPayload
    }
}
