/// The topics downstream teams read (Docs/output-topics.md).
package struct OutputTopics: Sendable, Hashable {
    /// One event per new notification, CloudEvents headers. Default `appstore.notifications.decoded`.
    package var decoded = "appstore.notifications.decoded"
    /// A subscription's state after each accepted change; log-compacted. Default `appstore.subscriptions.state`.
    package var subscriptionState = "appstore.subscriptions.state"
    /// Every rejected body with its status and reason. Default `appstore.notifications.dlq`.
    package var deadLetter = "appstore.notifications.dlq"

    package init() {}
}
