import AppStoreTestSupport
import Foundation
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

/// The most connections the manifests let asnp open, against what PostgreSQL allows: every pod that uses the database
/// at its autoscaler's maximum, each with its whole pool. Straight to PostgreSQL (the base), they must fit
/// PostgreSQL's default `max_connections` less its reserved ones; through PgBouncer (production), PgBouncer must
/// take every client and give PostgreSQL no more than that, yet enough for one batch per raw-topic partition.
@Suite(
    "Connection budget: the manifests' most connections fit PostgreSQL's, directly and through PgBouncer",
    .tags(.store)
)
struct ConnectionBudgetTests {
    /// One workload using the database at its largest.
    struct Client: CustomStringConvertible {
        var name: String
        var replicas: Int
        var connectionsPerPod: Int
        var connections: Int { replicas * connectionsPerPod }
        var description: String { "\(name): \(replicas) × \(connectionsPerPod)" }
    }

    /// The connections PostgreSQL allows clients by default: `max_connections` less the superuser's reserve, as the
    /// server itself states them (its built-in defaults, whatever a test server was started with).
    static func postgresDefaultAllowance() async throws -> Int {
        let server = try await TestPostgresServer.shared()
        let values = try await server.psql(
            "postgres",
            """
            SELECT string_agg(boot_val, ' ' ORDER BY name) FROM pg_settings
            WHERE name IN ('max_connections', 'superuser_reserved_connections')
            """
        ).split(separator: " ").compactMap { Int($0) }
        try #require(values.count == 2)
        return values[0] - values[1]
    }

    /// The documents of an overlay, kustomize's patches merged over what they patch (by kind and name; the
    /// fields read here are scalars one level down, which a shallow merge of `spec` gets right).
    static func documents(_ directories: [String]) throws -> [[String: Any]] {
        var merged: [[String: Any]] = []
        for document in try directories.flatMap({ try DeployFilesTests.yamlDocuments(under: $0) }) {
            let key = { (document: [String: Any]) in
                "\(document["kind"] ?? "")/\(DeployFilesTests.value(document, "metadata", "name") ?? "")"
            }
            if let index = merged.firstIndex(where: { key($0) == key(document) }) {
                var spec = merged[index]["spec"] as? [String: Any] ?? [:]
                spec.merge(document["spec"] as? [String: Any] ?? [:]) { $1 }
                merged[index]["spec"] = spec
            } else {
                merged.append(document)
            }
        }
        return merged
    }

    /// Every Deployment, Job and CronJob whose containers get a `DATABASE_URL`, at its most replicas and connections
    /// (a CronJob never runs two jobs at once: `concurrencyPolicy: Forbid`).
    static func clients(_ documents: [[String: Any]], settings: [String: String]) throws -> [Client] {
        let defaultPool = NotificationStoreConfiguration(
            endpoint: .tcp(host: "localhost", port: 5432),
            username: "asnp",
            database: "asnp",
            tls: .disable
        ).maximumConnections
        var maximumReplicas: [String: Int] = [:]
        for document in documents {
            guard let target = DeployFilesTests.value(document, "spec", "scaleTargetRef", "name") as? String else {
                continue
            }
            let maximum =
                DeployFilesTests.value(document, "spec", "maxReplicaCount")
                ?? DeployFilesTests.value(document, "spec", "maxReplicas")
            maximumReplicas[target] = try #require(maximum as? Int, "\(target): an autoscaler without a maximum")
        }
        var clients: [Client] = []
        for document in documents {
            guard let pod = DeployFilesTests.podSpec(document) else { continue }
            let name = try #require(DeployFilesTests.value(document, "metadata", "name") as? String)
            if document["kind"] as? String == "CronJob" {
                #expect(
                    DeployFilesTests.value(document, "spec", "concurrencyPolicy") as? String == "Forbid",
                    "\(name): overlapping runs would multiply its connections"
                )
            }
            func pool(_ container: [String: Any]) -> Int {
                let environment = container["env"] as? [[String: Any]] ?? []
                // The read API's settings are its own section (api.database.*) when it names a URL of its own.
                let prefix = ["DATABASE_", "API_DATABASE_"].last { prefix in
                    environment.contains { $0["name"] as? String == prefix + "URL" }
                }
                guard let prefix else { return 0 }
                let fromSettings = (container["envFrom"] as? [[String: Any]] ?? []).contains {
                    DeployFilesTests.value($0, "configMapRef", "name") as? String == "asnp-settings"
                }
                let explicit = environment.first { $0["name"] as? String == prefix + "MAX_CONNECTIONS" }?["value"]
                return (explicit as? String ?? (fromSettings ? settings[prefix + "MAX_CONNECTIONS"] : nil))
                    .flatMap(Int.init) ?? defaultPool
            }
            // Init containers run one by one before the others, which run together.
            let perPod = max(
                (pod["initContainers"] as? [[String: Any]] ?? []).map(pool).max() ?? 0,
                (pod["containers"] as? [[String: Any]] ?? []).map(pool).reduce(0, +)
            )
            guard perPod > 0 else { continue }
            let replicas =
                maximumReplicas[name]
                ?? DeployFilesTests.value(document, "spec", "replicas") as? Int
                ?? DeployFilesTests.value(document, "spec", "parallelism") as? Int
                ?? DeployFilesTests.value(document, "spec", "jobTemplate", "spec", "parallelism") as? Int ?? 1
            clients.append(Client(name: name, replicas: replicas, connectionsPerPod: perPod))
        }
        return clients
    }

    @Test("the base, straight to PostgreSQL: every pod at its maximum fits PostgreSQL's default max_connections")
    func base() async throws {
        let clients = try Self.clients(
            Self.documents(["kubernetes/base"]),
            settings: try DeployFilesTests.envFile("kubernetes/base/settings.env")
        )
        #expect(Set(clients.map(\.name)) == ["asnp-migrate", "asnp-worker"])
        let allowance = try await Self.postgresDefaultAllowance()
        let total = clients.map(\.connections).reduce(0, +)
        #expect(total <= allowance, "\(total) connections (\(clients)) > \(allowance)")
    }

    @Test(
        """
        production, through PgBouncer in transaction mode: it takes every client of every pod at its maximum, \
        gives PostgreSQL at most its fixed pool (within the default max_connections), enough for a batch per \
        raw-topic partition, and the settings turn prepared statements off
        """
    )
    func production() async throws {
        let documents = try Self.documents(["kubernetes/base", "kubernetes/overlays/production"])
        let settings = try DeployFilesTests.envFile("kubernetes/base/settings.env")
            .merging(try DeployFilesTests.envFile("kubernetes/overlays/production/settings.env")) { $1 }
        let clients = try Self.clients(documents, settings: settings)
        #expect(
            Set(clients.map(\.name)) == ["asnp-migrate", "asnp-worker", "asnp-history", "asnp-retention", "asnp-api"]
        )

        let bouncer = try INIFile(
            contentsOfFile: DeployFilesTests.deploy.appendingPathComponent(
                "kubernetes/overlays/production/pgbouncer.ini"
            ).path
        )
        #expect(bouncer.value("pgbouncer", "pool_mode") == "transaction")
        #expect(settings["DATABASE_PREPARED_STATEMENTS"] == "false", "named statements do not survive the hand-over")
        let deployment = try #require(
            documents.first {
                $0["kind"] as? String == "Deployment"
                    && DeployFilesTests.value($0, "metadata", "name") as? String == "asnp-pgbouncer"
            }
        )
        #expect(
            !documents.contains {
                DeployFilesTests.value($0, "spec", "scaleTargetRef", "name") as? String == "asnp-pgbouncer"
            },
            "PgBouncer's count must stay fixed: the budget multiplies it"
        )
        let bouncers = try #require(DeployFilesTests.value(deployment, "spec", "replicas") as? Int)

        // Clients: the Service may send every one of them to the same replica.
        let clientConnections = clients.map(\.connections).reduce(0, +)
        let maxClients = try #require(bouncer.value("pgbouncer", "max_client_conn").flatMap(Int.init))
        #expect(clientConnections <= maxClients, "\(clientConnections) clients (\(clients)) > max_client_conn")

        // Servers: one database; a pool per user on each replica (the pipeline's at the default size, the read API's
        // capped lower), all capped per database.
        let pool = try #require(bouncer.value("pgbouncer", "default_pool_size").flatMap(Int.init))
        let apiPool = try #require(
            bouncer.value("users", "asnp_api").flatMap { $0.firstMatch(of: /max_user_connections=([0-9]+)/) }.flatMap {
                Int($0.output.1)
            },
            "the read API's user is capped on its own"
        )
        let reserve = bouncer.value("pgbouncer", "reserve_pool_size").flatMap(Int.init) ?? 0
        let cap = bouncer.value("pgbouncer", "max_db_connections").flatMap(Int.init) ?? Int.max
        #expect(pool + apiPool <= cap, "the pipeline's pool and the API's fit the cap: neither waits for the other")
        let serverConnections = bouncers * min(pool + apiPool + reserve, cap)
        let allowance = try await Self.postgresDefaultAllowance()
        #expect(serverConnections <= allowance, "PgBouncer may open \(serverConnections) > \(allowance)")
        #expect(serverConnections < clientConnections, "PgBouncer must take fewer than its clients would")

        let topics = try DeployFilesTests.yaml("kubernetes/kafka-topics/kafka-topics.yaml")
        let raw = try #require(
            topics.first { DeployFilesTests.value($0, "metadata", "name") as? String == "appstore.notifications.raw" }
        )
        let partitions = try #require(DeployFilesTests.value(raw, "spec", "partitions") as? Int)
        #expect(bouncers * pool >= partitions, "a full group writes one batch per partition at once")
    }
}
