/// The topics downstream teams read (Docs/output-topics.md).
public struct OutputTopics: Sendable, Hashable {
    /// One event per new notification, CloudEvents headers. Default `appstore.notifications.decoded`.
    public var decoded = "appstore.notifications.decoded"
    /// A subscription's state after each accepted change; log-compacted. Default `appstore.subscriptions.state`.
    public var subscriptionState = "appstore.subscriptions.state"
    /// Every rejected body with its status and reason. Default `appstore.notifications.dlq`.
    public var deadLetter = "appstore.notifications.dlq"

    public init() {}
}
