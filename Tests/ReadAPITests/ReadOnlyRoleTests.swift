import AppStoreModels
import AppStoreTestSupport
import Foundation
import LocalPostgres
import StoreTestSupport
import Testing

/// Deploy/postgres/api-role.sql, run as the runbook says, gives the API all it reads and nothing more.
@Suite(
    "The API's database role (Deploy/postgres/api-role.sql): reads what the API needs, writes nothing",
    .tags(.process)
)
struct ReadOnlyRoleTests {
    typealias Rig = APITestRig

    @Test("the API reads as asnp_api once the file ran; the role can neither write nor read the outbox")
    func readOnlyRole() async throws {
        let key = Rig.Key(id: "billing", scopes: [(bundleId: Rig.bundleId, environments: ["Sandbox"])])
        try await Rig.run(keys: [key], readAs: "asnp_api") { rig in
            let now = Rig.nowMilliseconds
            try await rig.store([
                Rig.subscribed("9100000001", at: now)
            ])
            let file = Fixtures.packageRoot.appendingPathComponent("Deploy/postgres/api-role.sql").path
            // Twice: the file may run again (a new database, a password changed).
            for _ in 0..<2 {
                _ = try await LocalPostgresServer.offPool {
                    try LocalPostgresServer.run(
                        try LocalPostgresServer.binary("psql"),
                        [
                            "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "api_password=not-a-real-one", "-h", "127.0.0.1",
                            "-p", "\(rig.server.port)", "-U", "postgres", "-d", rig.database, "-f", file,
                        ]
                    )
                }
            }
            let ready = await eventually { (try? await rig.status("/health/ready").status) == 200 }
            #expect(ready, "ready once the role may read the schema's version")
            let subscription = try await rig.get("/v1/subscriptions/9100000001", key: key)
            #expect(subscription.status == 200)
            #expect(try await rig.get("/v1/subscriptions/9100000001/notifications", key: key).status == 200)
            #expect(try await rig.get("/v1/customers/\(UUID().uuidString)", key: key).status == 404)

            func asRole(_ sql: String) async -> String? {
                do {
                    _ = try await LocalPostgresServer.offPool {
                        try LocalPostgresServer.run(
                            try LocalPostgresServer.binary("psql"),
                            [
                                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(rig.server.port)",
                                "-U", "asnp_api", "-d", rig.database, "-c", sql,
                            ]
                        )
                    }
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            let delete = await asRole("DELETE FROM subscriptions")
            #expect(
                delete?.contains("permission denied") == true || delete?.contains("read-only") == true,
                "\(delete ?? "deleted")"
            )
            let outbox = await asRole("SELECT count(*) FROM outbox")
            #expect(outbox?.contains("permission denied") == true, "\(outbox ?? "read the outbox")")
            let table = await asRole("CREATE TABLE t (x int)")
            #expect(table != nil, "no DDL")
        }
    }
}
