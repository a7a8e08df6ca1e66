import ArgumentParser
import AsyncHTTPClient
import CommandSupport
import Foundation
import LoadGeneration
import Logging
import NIOCore
import NIOHTTP1
import NotificationStore
import PostgresNIO
import PostgresRuntime
import ReadAPI

/// `asnp-bench api`: the read API's subscription lookup at fixed rates, against the same lookup by a plain SQL client
/// in the same run.
struct BenchAPICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Measure the read API's subscription lookup against the same query from a plain SQL client.",
        discussion: """
            Fills a scratch database on the server of --database-url (dropped afterwards) with --subscriptions \
            subscription rows, starts `asnp api` (the binary beside this one) on it, and at each of --rates asks for \
            random subscriptions at that fixed rate for --seconds: first through the API (GET \
            /v1/subscriptions/{id} with a key, over keep-alive HTTP/1.1), then as the query the API runs, from a \
            postgres-nio client with as many connections as the API's pool. Requests are due on a fixed schedule \
            (open loop): latency counts from when a request was due, so a stall is seen, not hidden. Reports the \
            answered rate, p50 and p99 of each, their ratio, and the API process's CPU per request. A rate is \
            sustained when at least 99% of its requests were answered on time (none dropped for want of a free \
            slot among --max-in-flight).
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Subscriptions in the table; each request asks for a random one.")
    var subscriptions = 20_000

    @Option(
        help: "Requests per second to measure, comma-separated.",
        transform: {
            try $0.split(separator: ",").map {
                guard let rate = Int($0), rate > 0 else { throw ValidationError("--rates: positive whole numbers") };
                return rate
            }
        }
    )
    var rates: [Int] = [500, 1000, 2000]

    @Option(help: "Seconds each rate runs, per side.")
    var seconds = 10.0

    @Option(help: "Requests in flight at most; one due while that many wait is dropped and counted.")
    var maxInFlight = 256

    @Option(help: "Connections of the API's pool (api.database.maxConnections) and of the SQL client.")
    var connections = 8

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    func validate() throws {
        guard subscriptions > 0, seconds > 0, maxInFlight > 0, connections > 0 else {
            throw ValidationError("--subscriptions, --seconds, --max-in-flight and --connections must be positive")
        }
    }

    func run() async throws {
        var base = try database.configuration()
        base.operationTimeout = .seconds(600)
        var logger = Logger(label: "asnp.bench.api", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        let rows = try await ScratchDatabase.with(on: base, prefix: "asnp_bench_api", logger: logger) { scratch in
            try await measure(
                scratch,
                url: try BenchWorkerCommand.url(configuration: database, database: scratch.database),
                logger: logger
            )
        }
        APIBenchReport(
            title: "Subscription lookup, \(subscriptions) subscriptions, \(seconds) s per rate and side, "
                + "\(connections) database connections each",
            rows: rows
        ).print(json: json)
    }

    private func measure(_ scratch: NotificationStoreConfiguration, url: String, logger: Logger) async throws
        -> [APIBenchReport.Row]
    {
        BenchWorkerCommand.note("filling \(subscriptions) subscriptions...")
        try await NotificationStore.withRunning(configuration: scratch, logger: logger) { store in
            try await store.migrate()
            _ = try await store.execute(Self.fill(subscriptions))
            _ = try await store.execute("ANALYZE subscriptions")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-bench-api-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (key, sha256) = APIKeyring.generateKey()
        let keysFile = directory.appendingPathComponent("keys.json")
        let entry = APIKeysFile.Entry(
            id: "bench",
            sha256: sha256,
            scopes: [.init(bundleId: Self.bundleId, environments: ["Production"])],
            requestsPerSecond: 1_000_000,
            burst: 1_000_000
        )
        try JSONEncoder().encode(APIKeysFile(keys: [entry])).write(to: keysFile)
        let ports = Array((20_000...32_000).shuffled().prefix(2))
        let api = Process()
        api.executableURL = try ASNPBench.pipelineExecutable()
        api.arguments = ["api", "--log-level", "warning"]
        api.environment = ProcessInfo.processInfo.environment.merging([
            "DATABASE_URL": url, "API_KEYS_FILE": keysFile.path, "API_HOST": "127.0.0.1", "API_PORT": "\(ports[0])",
            "API_STATUS_HOST": "127.0.0.1", "API_STATUS_PORT": "\(ports[1])",
            "DATABASE_MAX_CONNECTIONS": "\(connections)",
        ]) { $1 }
        api.standardOutput = FileHandle.nullDevice
        try api.run()
        defer {
            api.terminate()
            api.waitUntilExit()
        }
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                connectionPool: .init(
                    idleTimeout: .seconds(60),
                    concurrentHTTP1ConnectionsPerHostSoftLimit: maxInFlight
                )
            )
        )
        do {
            let rows = try await measure(
                client: client,
                key: key,
                ports: ports,
                api: api,
                scratch: scratch,
                logger: logger
            )
            try await client.shutdown()
            return rows
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Each rate through the API on `ports`, then by SQL.
    private func measure(
        client: HTTPClient,
        key: String,
        ports: [Int],
        api: Process,
        scratch: NotificationStoreConfiguration,
        logger: Logger
    ) async throws -> [APIBenchReport.Row] {
        guard try await ReadinessProbe.waitUntilReady(statusPort: ports[1], client: client, within: .seconds(30)) else {
            throw BenchFailure("asnp api did not become ready within 30 s")
        }
        var sqlConfiguration = scratch
        sqlConfiguration.maximumConnections = connections
        let sql = PostgresClient(
            configuration: sqlConfiguration.runtimeConfiguration.clientConfiguration,
            backgroundLogger: logger
        )
        let sqlPool = Task { await sql.run() }
        defer { sqlPool.cancel() }

        let count = subscriptions
        let authorization = "Bearer \(key)"
        let apiURL = "http://127.0.0.1:\(ports[0])/v1/subscriptions/"
        let lookUpByAPI: @Sendable () async -> Bool = {
            var request = HTTPClientRequest(url: apiURL + Self.id(Int.random(in: 0..<count)))
            request.headers.add(name: "Authorization", value: authorization)
            guard let response = try? await client.execute(request, timeout: .seconds(10)),
                let body = try? await response.body.collect(upTo: 1 << 20)
            else { return false }
            return response.status == .ok && body.readableBytes > 0
        }
        let lookUpBySQL: @Sendable () async -> Bool = {
            let id = Self.id(Int.random(in: 0..<count))
            do {
                let rows = try await sql.query(
                    """
                    SELECT s.original_transaction_id, s.entitled, s.entitled_until, to_jsonb(s)::text FROM subscriptions s
                    WHERE s.original_transaction_id = \(id) AND s.bundle_id = \(Self.bundleId)
                        AND s.environment = 'Production'
                    """
                )
                var found = false
                for try await (_, _, _, json) in rows.decode((String, Bool?, Date?, String).self) {
                    found = !json.isEmpty
                }
                return found
            } catch {
                return false
            }
        }
        // Warm both: connections opened, statements planned, the table's pages in memory.
        _ = await OpenLoop.run(rate: 200, seconds: 2, maxInFlight: maxInFlight, lookUpByAPI)
        _ = await OpenLoop.run(rate: 200, seconds: 2, maxInFlight: maxInFlight, lookUpBySQL)
        var rows: [APIBenchReport.Row] = []
        for rate in rates {
            BenchWorkerCommand.note("\(rate)/s through the API, then by SQL...")
            let cpuBefore = ProcessStats.cpuSeconds(of: api.processIdentifier)
            let byAPI = await OpenLoop.run(rate: Double(rate), seconds: seconds, maxInFlight: maxInFlight, lookUpByAPI)
            let apiCPU = ProcessStats.cpuSeconds(of: api.processIdentifier) - cpuBefore
            let bySQL = await OpenLoop.run(rate: Double(rate), seconds: seconds, maxInFlight: maxInFlight, lookUpBySQL)
            rows.append(
                APIBenchReport.Row(
                    rate: rate,
                    api: byAPI,
                    sql: bySQL,
                    apiCPUMillisecondsPerRequest: byAPI.answered > 0 ? apiCPU * 1000 / Double(byAPI.answered) : 0
                )
            )
        }
        return rows
    }

    static let bundleId = "com.example.bench"

    static func id(_ index: Int) -> String { String(2_000_000_000 + index) }

    /// `count` active monthly subscriptions, every column a real row fills filled (the JSON the API returns is the
    /// row's), keyed as ``id(_:)``.
    static func fill(_ count: Int) -> String {
        """
        INSERT INTO subscriptions (
            original_transaction_id, last_notification_uuid, last_notification_type, last_subtype, last_signed_date,
            transaction_id, product_id, expires_date, auto_renew_status, environment, bundle_id, app_apple_id, status,
            auto_renew_product_id, price, currency, product_type, purchase_date, in_app_ownership_type,
            subscription_group_identifier, app_account_token, renewal_date, is_in_billing_retry, status_signed_date,
            renewal_signed_date, purchase_signed_date
        )
        SELECT (2000000000 + i)::text, gen_random_uuid(), 'DID_RENEW', NULL, now() - interval '1 day',
            (3000000000 + i)::text, 'com.example.bench.pro.monthly', now() + interval '29 days', 1, 'Production',
            '\(bundleId)', 1234567890, 1, 'com.example.bench.pro.monthly', 9990, 'USD', 'Auto-Renewable Subscription',
            now() - interval '1 day', 'PURCHASED', '21000001', gen_random_uuid()::text, now() + interval '29 days',
            false, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
        FROM generate_series(0, \(count - 1)) AS i
        """
    }
}

/// Requests on a fixed schedule, whatever the answers take (open loop).
enum OpenLoop {
    struct Result: Encodable, Sendable {
        /// Requests due.
        var due = 0
        /// Answered as expected.
        var answered = 0
        /// Failed or answered otherwise.
        var failed = 0
        /// Not sent: `maxInFlight` were waiting when they were due.
        var dropped = 0
        var seconds = 0.0
        /// From when each answered request was due, in milliseconds.
        var p50 = 0.0
        var p99 = 0.0
        var maximum = 0.0

        var perSecond: Double { seconds > 0 ? Double(answered) / seconds : 0 }
        /// At least 99% of the requests due were answered.
        var sustained: Bool { due > 0 && Double(answered) >= 0.99 * Double(due) }
    }

    /// Runs `request` `rate` times a second for `seconds`.
    static func run(
        rate: Double,
        seconds: Double,
        maxInFlight: Int,
        _ request: @escaping @Sendable () async -> Bool
    ) async -> Result {
        let total = Int(rate * seconds)
        let latencies = LatencyRecorder()
        let inFlight = InFlight()
        let start = ContinuousClock.now
        let interval = Duration.seconds(1 / rate)
        var result = Result(due: total)
        await withDiscardingTaskGroup { group in
            var index = 0
            while index < total {
                let now = ContinuousClock.now
                while index < total, start + interval * index <= now {
                    let due = start + interval * index
                    index += 1
                    guard inFlight.enter(limit: maxInFlight) else {
                        result.dropped += 1
                        continue
                    }
                    group.addTask {
                        let ok = await request()
                        latencies.record(ok: ok, since: due)
                        inFlight.leave()
                    }
                }
                if index < total {
                    try? await Task.sleep(until: start + interval * index, tolerance: .microseconds(200))
                }
            }
        }
        result.seconds = start.duration(to: .now).seconds
        latencies.summarize(into: &result)
        return result
    }
}
