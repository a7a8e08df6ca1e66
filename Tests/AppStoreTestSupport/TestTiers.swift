import Testing

/// The tiers every suite is tagged with, one each, by the heaviest thing it needs. `scripts/test-tier TIER...` runs
/// the suites of some tiers (`scripts/test-fast` the fast one); `scripts/test` runs the fast tier first, then the rest.
extension Tag {
    /// Runs in the test process alone, in milliseconds: no PostgreSQL, Kafka mock, child process or socket. Apple's
    /// models and verification, the output contract, the pure state machines and schedules, settings and rows.
    @Tag public static var fast: Self
    /// A real PostgreSQL server (a throwaway one per test process), no Kafka: the store, its migrations and reports.
    @Tag public static var store: Self
    /// The pipeline's parts in this process: librdkafka's mock cluster, HTTP on loopback, event loops, often
    /// PostgreSQL too.
    @Tag public static var pipeline: Self
    /// Child processes: `asnp` and `asnp-bench` as a user runs them, and the tools the tests check with (promtool,
    /// PgBouncer, the schema validators).
    @Tag public static var process: Self
    /// Faults injected while the pipeline runs: brokers down or slow, PostgreSQL stopped, processes killed, the chaos
    /// soak. The longest tier.
    @Tag public static var fault: Self
}
