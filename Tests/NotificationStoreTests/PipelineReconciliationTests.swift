import AppStoreTestSupport
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

@Suite("The fault tests' reconciliation step", .tags(.store))
struct PipelineReconciliationTests {
    @Test("clean after the scenario is written; names a body never stored, a row nothing explains, a wrong state")
    func findsWhatDoesNotAddUp() async throws {
        let (server, configuration) = try await makeDatabase()
        let bodies = try StoreFixtures.scenario().map(\.body)
        let entries = try await StoreFixtures.scenarioEntries()
        try await withStore(configuration) { _ = try await $0.write(NotificationBatch(entries: entries)) }
        let database = configuration.database

        let clean = try await PipelineReconciliation.check(accepted: bodies, server: server, database: database)
        #expect(clean.problems.isEmpty, "\(clean.problems)")
        #expect(clean.stored == Set(bodies).count)

        let neverStored = try #require(Fixtures.v2Cases.first { $0.kind == "valid" }).body
        let missing = try await PipelineReconciliation.check(
            accepted: bodies + [neverStored],
            server: server,
            database: database
        )
        #expect(missing.problems.contains { $0.contains("neither stored nor rejected") }, "\(missing.problems)")

        let unexplained = try await PipelineReconciliation.check(
            accepted: Array(bodies.dropFirst()).filter { $0 != bodies[0] },
            server: server,
            database: database
        )
        #expect(unexplained.problems.contains { $0.contains("no accepted body explains") }, "\(unexplained.problems)")

        try await server.psql(
            database,
            """
            UPDATE subscriptions SET last_notification_uuid = gen_random_uuid()
            WHERE original_transaction_id = (SELECT min(original_transaction_id) FROM subscriptions)
            """
        )
        let wrongState = try await PipelineReconciliation.check(accepted: bodies, server: server, database: database)
        #expect(wrongState.problems.contains { $0.contains("subscriptions differ") }, "\(wrongState.problems)")
    }

    @Test(
        """
        A rejected body delivered twice while answered 200 once adds up only when the other post went unanswered \
        (an acknowledgement lost before a 503 may still have put it on the topic)
        """,
        arguments: ["hostile", "malformed"]
    )
    func unansweredPostsMayAddADelivery(kind: String) async throws {
        let (server, configuration) = try await makeDatabase()
        let body = try #require(Fixtures.v2Cases.first { $0.kind == kind }).body
        let entries = [
            await StoreFixtures.entry(body: body, offset: 0), await StoreFixtures.entry(body: body, offset: 1),
        ]
        try await withStore(configuration) { _ = try await $0.write(NotificationBatch(entries: entries)) }
        let database = configuration.database

        let once = try await PipelineReconciliation.check(accepted: [body], server: server, database: database)
        #expect(once.problems.contains { $0.contains("rejected 2 times") }, "\(once.problems)")

        let retried = try await PipelineReconciliation.check(
            accepted: [body],
            unanswered: [body],
            server: server,
            database: database
        )
        #expect(retried.problems.isEmpty, "\(retried.problems)")
        #expect(retried.rejectedDeliveries == 2)
    }
}
