import PostgresRuntime

extension SchemaMigration {
    /// Every migration this program knows, in version order.
    package static let all: [SchemaMigration] = [
        .initialSchema, .replayMarks, .outboxRefusals, .notificationOrigin, .subscriptionEntitlement, .bodyStore,
        .historyLedger, .subscriptionStateRules, .historyListed, .utcBodyPartitions, .partitionOwners,
    ]

    /// The schema version this program needs.
    package static var latestVersion: Int { all.last?.version ?? 0 }
}
