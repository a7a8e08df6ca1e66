import AppStoreModels
import AppStoreVerification
import ArgumentParser
import CommandSupport
import Foundation
import KafkaClient
import LoadGeneration
import Logging
import NotificationStore
import PostgresRuntime

/// `asnp-bench store`: the batch writer's rows/s against a plain COPY of the same rows, in the same run.
struct BenchStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Measure the PostgreSQL batch writer against a plain COPY of the same rows.",
        discussion: """
            Generates realistic signed V2 subscription notifications (about 12 KB each: three JWS with x5c \
            chains), verifies them, then writes them in batches to a scratch database created on the server of \
            --database-url (and dropped afterwards): with the batch writer (one statement over UNNEST arrays), \
            and with a plain COPY of the same rows into a bare table with no keys or indexes, the floor. Each runs --rounds times per column compression (lz4, pglz, none); the \
            median is reported with rows/s, MB/s of raw body + decoded JSON, and the table size.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "How many distinct notifications to write per round.")
    var count = 20_000

    @Option(help: "Notifications per batch (one transaction each).")
    var batchSize = 1_000

    @Option(help: "Rounds per measurement; the median is reported.")
    var rounds = 3

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    func validate() throws {
        guard count > 0, batchSize > 0, rounds > 0 else {
            throw ValidationError("--count, --batch-size and --rounds must be positive")
        }
    }

    func run() async throws {
        var base = try database.configuration()
        base.operationTimeout = .seconds(600)
        FileHandle.standardError.write(Data("generating and verifying \(count) notifications...\n".utf8))
        let batches = try await Self.workload(count: count, batchSize: batchSize)

        var logger = Logger(label: "asnp.bench.store", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        let rows = try await ScratchDatabase.with(on: base, prefix: "asnp_bench", logger: logger) { configuration in
            try await measure(configuration: configuration, batches: batches, logger: logger)
        }
        StoreBenchReport(
            title: "PostgreSQL batch write, \(count) V2 notifications in batches of \(batchSize), median of "
                + "\(rounds) rounds",
            rows: rows
        ).print(json: json)
    }

    private func measure(
        configuration: NotificationStoreConfiguration,
        batches: [NotificationBatch],
        logger: Logger
    ) async throws -> [StoreBenchRow] {
        var rows: [StoreBenchRow] = []
        _ = try await NotificationStore.withRunning(configuration: configuration, logger: logger) { store in
            try await store.migrate()
        }
        let rounds = self.rounds
        for compression in ["lz4", "pglz", "none"] {
            try await NotificationStore.withRunning(configuration: configuration, logger: logger) { store in
                for statement in NotificationStore.bodiesCompression(compression) {
                    _ = try await store.execute(statement)
                }
                _ = try await store.execute("DROP TABLE IF EXISTS bench_plain_copy")
                for statement in NotificationStore.bareTableDefinition("bench_plain_copy", compression: compression) {
                    _ = try await store.execute(statement)
                }
            }
            var samples: [StoreBenchMethod: [StoreBenchSample]] = [:]
            for _ in 0..<rounds {
                for method in StoreBenchMethod.allCases {
                    let sample = try await NotificationStore.withRunning(configuration: configuration, logger: logger) {
                        store in
                        _ = try await store.execute(
                            "TRUNCATE notifications, notification_bodies, subscriptions, outbox, bench_plain_copy"
                        )
                        _ = try? await store.execute("CHECKPOINT")
                        let start = ContinuousClock.now
                        var bytes = 0
                        var stored = 0
                        for batch in batches {
                            if method == .plainCopy {
                                bytes += try await store.copyPlain(batch, into: "bench_plain_copy")
                                stored += batch.entries.count
                            } else {
                                stored += try await store.write(batch).storedNotifications.count
                            }
                        }
                        let seconds = (ContinuousClock.now - start).seconds
                        let size = try await store.execute(
                            method == .plainCopy
                                ? "SELECT pg_total_relation_size('bench_plain_copy')::text"
                                : """
                                SELECT (pg_total_relation_size('notifications') + pg_total_relation_size('jws_headers')
                                    + (SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits
                                        WHERE inhparent = 'notification_bodies'::regclass))::text
                                """
                        )
                        return StoreBenchSample(
                            rows: stored,
                            seconds: seconds,
                            bytes: bytes,
                            tableBytes: Int(size.first ?? "0") ?? 0
                        )
                    }
                    guard sample.rows == batches.reduce(0, { $0 + $1.entries.count }) else {
                        throw BenchFailure("\(method.name) stored \(sample.rows) rows, expected every notification")
                    }
                    samples[method, default: []].append(sample)
                }
            }
            // Every method writes the same rows: MB/s counts the raw bodies and decoded JSON that plain COPY sent.
            let inputBytes = samples[.plainCopy]![0].bytes
            for method in StoreBenchMethod.allCases {
                var median = samples[method]!.sorted { $0.seconds < $1.seconds }[rounds / 2]
                median.bytes = inputBytes
                rows.append(StoreBenchRow(method: method.name, compression: compression, sample: median))
            }
        }
        return rows
    }

    /// Signed, verified notifications as the worker would hand them over, in batches.
    static func workload(count: Int, batchSize: Int) async throws -> [NotificationBatch] {
        let workload = try VerifyWorkload(count: count, chains: 1)
        let verifier = try workload.verifier(cacheCapacity: 64)
        var batches: [NotificationBatch] = []
        var batch = NotificationBatch()
        for (offset, body) in workload.bodies.enumerated() {
            guard case .verified(let notification) = await verifier.verify(body: body) else {
                throw BenchFailure("a generated notification did not verify")
            }
            let raw = RawNotification(
                body: Array(body),
                key: nil,
                headers: ["version": "2", "environment": "sandbox"],
                receivedAt: Date(),
                source: KafkaTopicPartitionOffset(topic: "bench.raw", partition: 0, offset: Int64(offset))
            )
            batch.appendVerified(notification, raw: raw)
            if batch.entries.count == batchSize {
                batches.append(batch)
                batch = NotificationBatch()
            }
        }
        if !batch.entries.isEmpty { batches.append(batch) }
        return batches
    }
}

/// What the store benchmark measures: the floor, then the batch writer.
enum StoreBenchMethod: CaseIterable, Sendable {
    case plainCopy, unnest

    var name: String {
        switch self {
        case .plainCopy: "plain COPY, bare table"
        case .unnest: "batch writer, UNNEST"
        }
    }
}

struct StoreBenchSample: Sendable {
    var rows: Int
    var seconds: Double
    var bytes: Int
    var tableBytes: Int
}

struct StoreBenchRow: Encodable {
    var method: String
    var compression: String
    var rows: Int
    var seconds: Double
    var rowsPerSecond: Double
    var megabytesPerSecond: Double
    var tableMegabytes: Double

    init(method: String, compression: String, sample: StoreBenchSample) {
        self.method = method
        self.compression = compression
        self.rows = sample.rows
        self.seconds = sample.seconds
        self.rowsPerSecond = Double(sample.rows) / sample.seconds
        self.megabytesPerSecond = Double(sample.bytes) / 1_000_000 / sample.seconds
        self.tableMegabytes = Double(sample.tableBytes) / 1_000_000
    }
}

/// The store benchmark's rows, each compared with the plain COPY of the same compression.
struct StoreBenchReport {
    var title: String
    var rows: [StoreBenchRow]

    func print(json: Bool) {
        func ratio(_ row: StoreBenchRow) -> Double {
            let floor = rows.first { $0.compression == row.compression && $0.method == StoreBenchMethod.plainCopy.name }
            return row.rowsPerSecond / (floor?.rowsPerSecond ?? row.rowsPerSecond)
        }
        if json {
            struct Output: Encodable {
                struct Row: Encodable {
                    var row: StoreBenchRow
                    var ratioToPlainCopy: Double
                    func encode(to encoder: any Encoder) throws {
                        try row.encode(to: encoder)
                        var container = encoder.container(keyedBy: Key.self)
                        try container.encode(ratioToPlainCopy, forKey: .ratioToPlainCopy)
                    }
                    enum Key: String, CodingKey { case ratioToPlainCopy }
                }
                var title: String
                var rows: [Row]
            }
            TextColumns.printJSON(Output(title: title, rows: rows.map { .init(row: $0, ratioToPlainCopy: ratio($0)) }))
            return
        }
        Swift.print(title)
        let widths = [28, 12, 10, 8, 12, 0]
        Swift.print(
            TextColumns.line(
                ["method", "compression", "rows/s", "MB/s", "table MB", "vs plain COPY"],
                widths: widths
            )
        )
        for row in rows {
            Swift.print(
                TextColumns.line(
                    [
                        row.method, row.compression, String(format: "%.0f", row.rowsPerSecond),
                        String(format: "%.1f", row.megabytesPerSecond), String(format: "%.1f", row.tableMegabytes),
                        String(format: "%.2f×", ratio(row)),
                    ],
                    widths: widths
                )
            )
        }
    }
}
