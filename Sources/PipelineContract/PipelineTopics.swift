/// The default names of the pipeline's topics. Every service, tool and test takes its names from here; operators
/// rename them with `kafka.topics.*` (Docs/configuration.md).
package enum PipelineTopics {
    /// The raw bodies as received, keyed by the peeked originalTransactionId (Docs/ingress.md).
    package static let raw = "appstore.notifications.raw"
    /// One event per new notification, CloudEvents headers (Docs/output-topics.md).
    package static let decoded = "appstore.notifications.decoded"
    /// A subscription's state after each accepted change; log-compacted.
    package static let subscriptionState = "appstore.subscriptions.state"
    /// Every rejected body with its status and reason.
    package static let deadLetter = "appstore.notifications.dlq"
    /// The three output topics under their default names.
    package static let outputs = [decoded, subscriptionState, deadLetter]
}

/// The topics downstream teams read (Docs/output-topics.md), as a worker is configured to publish them.
package struct OutputTopics: Sendable, Hashable {
    /// One event per new notification. Default ``PipelineTopics/decoded``.
    package var decoded = PipelineTopics.decoded
    /// A subscription's state after each accepted change. Default ``PipelineTopics/subscriptionState``.
    package var subscriptionState = PipelineTopics.subscriptionState
    /// Every rejected body. Default ``PipelineTopics/deadLetter``.
    package var deadLetter = PipelineTopics.deadLetter

    package init() {}
}
