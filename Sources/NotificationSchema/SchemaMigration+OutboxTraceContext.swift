import PostgresRuntime

extension SchemaMigration {
    /// Version 12: each outbox row keeps the trace context its notification or rejected body arrived with
    /// (`traceparent`, `tracestate`), so that its event is published in that trace whenever it goes out. Nullable, with
    /// no default: adding them rewrites nothing.
    static let outboxTraceContext = SchemaMigration(
        version: 12,
        name: "outbox rows keep their trace context",
        statements: [
            "ALTER TABLE outbox ADD COLUMN trace_parent text, ADD COLUMN trace_state text"
        ]
    )
}
