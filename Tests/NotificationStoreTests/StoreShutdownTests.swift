import AppStoreTestSupport
import Logging
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

@Suite("Store shutdown: what the store's operations still hold", .tags(.store))
struct StoreShutdownTests {
    @Test(
        "The connections the store's operations hold, as the runtime records them without reading any log: leased during an operation, none once the store stopped; at level info the store's handler gets none of the pool's debug lines"
    )
    func leases() async throws {
        let server = try await TestPostgresServer.shared()
        let database = try await server.makeDatabase()
        let lines = LogLines()
        let logger = Logger(label: "test.store-shutdown") { _ in lines.handler(level: .info) }
        let store = NotificationStore(configuration: database, logger: logger)
        let running = Task { try await store.run() }
        let during = try await store.withConnection("reading the ledger") { _ in store.leases }
        #expect(during.contains("leased for reading the ledger"), "\(during)")
        running.cancel()
        // The store's own bounds: the drain, then the pool's close; and slack for a loaded machine.
        let limit = database.operationTimeout + database.connectTimeout + .seconds(30)
        #expect(await finishes(within: limit) { _ = try? await running.value })
        #expect(store.leases == "none")
        #expect(lines.count { $0.contains("Creating new connection") } == 0, "\(lines.all)")
        #expect(lines.count { $0.contains("did not close") } == 0, "\(lines.all)")
    }
}
