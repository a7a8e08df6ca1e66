/// One attempt of Apple's to deliver a notification to your server.
package struct SendAttemptItem: Sendable, Hashable, Codable {
    /// When Apple attempted to send the notification, in milliseconds since 1970.
    package var attemptDate: Int64?
    /// The outcome of the attempt.
    package var sendAttemptResult: SendAttemptResult?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(attemptDate: Int64? = nil, sendAttemptResult: SendAttemptResult? = nil) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}
