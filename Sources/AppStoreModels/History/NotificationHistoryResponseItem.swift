/// One notification in Apple's notification history, with the attempts Apple made to deliver it.
public struct NotificationHistoryResponseItem: Sendable, Hashable, Codable {
    /// The notification exactly as Apple posted it (JWS); the same value as ``ResponseBodyV2/signedPayload``.
    public var signedPayload: String?
    /// Apple's delivery attempts, with their outcomes.
    public var sendAttempts: [SendAttemptItem]?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    public init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
