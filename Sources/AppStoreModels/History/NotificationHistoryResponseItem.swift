/// One notification in Apple's notification history, with the attempts Apple made to deliver it.
package struct NotificationHistoryResponseItem: Sendable, Hashable, Codable {
    /// The notification exactly as Apple posted it (JWS); the same value as ``ResponseBodyV2/signedPayload``.
    package var signedPayload: String?
    /// Apple's delivery attempts, with their outcomes.
    package var sendAttempts: [SendAttemptItem]?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
