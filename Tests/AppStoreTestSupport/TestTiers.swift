import Testing

/// The tiers suites are tagged with. `scripts/test --fast` runs the suites tagged `.fast`; `scripts/test` runs all.
extension Tag {
    /// Runs in the test process alone, in milliseconds: no PostgreSQL, Kafka mock, child process or socket. Apple's
    /// models and verification, the output contract, the pure state machines and schedules.
    @Tag public static var fast: Self
}
