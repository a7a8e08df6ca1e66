/// A first look at a body's top level: which notification version it is, and the V2 `signedPayload`.
struct NotificationBodyProbe: Decodable {
    enum SignedPayloadField {
        case absent
        case string(String)
        /// Present with a non-string value.
        case other
    }

    var signedPayload: SignedPayloadField = .absent
    /// Whether any field only V1 bodies have is present.
    var looksLikeV1 = false

    private enum CodingKeys: String, CodingKey {
        case signedPayload
        case notificationType = "notification_type"
        case password
        case unifiedReceipt = "unified_receipt"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.signedPayload) {
            if let string = try? container.decode(String.self, forKey: .signedPayload) {
                signedPayload = .string(string)
            } else {
                signedPayload = .other
            }
        }
        looksLikeV1 =
            container.contains(.notificationType) || container.contains(.password)
            || container.contains(.unifiedReceipt)
    }
}
