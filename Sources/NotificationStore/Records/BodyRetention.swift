/// What ``NotificationStore/applyBodyRetention(keepMonths:now:dryRun:)`` did: the months of bodies past retention it
/// dropped (or, in a dry run, would drop) and those it kept because events built from their bodies wait.
package struct BodyRetention: Sendable, Hashable {
    /// A month past retention that is kept for now.
    package struct HeldMonth: Sendable, Hashable {
        package var partition: BodyPartition
        /// Decoded events of its notifications still in the outbox (unpublished, or set aside).
        package var unpublishedEvents: Int
    }

    /// Months dropped, oldest first (a dry run's: months it would drop).
    package var dropped: [BodyPartition] = []
    /// Months past retention kept until their events are published.
    package var held: [HeldMonth] = []

    package init() {}
}
