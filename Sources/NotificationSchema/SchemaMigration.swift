import PostgresRuntime

extension SchemaMigration {
    /// Every migration this program knows, in version order.
    package static let all: [SchemaMigration] = [
        .initialSchema, .replayMarks, .outboxRefusals, .notificationOrigin, .subscriptionEntitlement, .bodyStore,
        .historyLedger, .subscriptionStateRules, .historyListed, .utcBodyPartitions, .partitionOwners,
        .outboxTraceContext,
    ]

    /// The schema version this program needs.
    package static var latestVersion: Int { all.last?.version ?? 0 }
}

extension PostgresRuntime.Migrations {
    /// The App Store schema's migrations as the runtime applies them: recorded in `asnp_schema_migrations`, under the
    /// advisory lock key ASCII `asnp`, so that workers starting together migrate one at a time.
    package static let appStore = PostgresRuntime.Migrations(
        SchemaMigration.all,
        table: "asnp_schema_migrations",
        lockKey: 0x6173_6E70
    )
}
