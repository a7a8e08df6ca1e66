import KafkaClient

/// A replay stopped by a message the cluster did not acknowledge: what it did before, for the operator's report, and
/// the failure. What was acknowledged stays replayed; running the replay again sends the rest.
package struct ReplayInterrupted<Progress: Sendable>: Error {
    package var progress: Progress
    package var failure: KafkaError

    package init(progress: Progress, failure: KafkaError) {
        self.progress = progress
        self.failure = failure
    }
}
