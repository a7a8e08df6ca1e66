import ArgumentParser
import CommandSupport
import Foundation
import LoadGeneration
import Logging
import NotificationStore
import PostgresRuntime
import Synchronization

/// `asnp-bench move-bodies`: schema 6's move of bodies kept in their rows, on a full table while a writer writes.
struct BenchMoveBodiesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move-bodies",
        abstract: "Measure moving --count pre-schema-6 bodies while a batch writer keeps writing.",
        discussion: """
            In a scratch database on the server of --database-url (dropped afterwards): writes --count generated V2 \
            notifications, puts every body and decoded JSON back in its notifications row as versions before schema \
            6 stored them, then measures the batch writer alone (the reference), and the batch writer while \
            NotificationStore.moveBodies (what asnp migrate runs) moves them all. Reports the move's rows/s and \
            duration, and the writer's batch latency (median, 99th percentile, worst) and rows/s in both phases: \
            how much the online move holds the workers back.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Notifications stored before the move (their bodies are moved).")
    var count = 100_000

    @Option(help: "Notifications per batch of the writer (each batch one transaction).")
    var batchSize = 200

    @Option(help: "Rows per transaction of the move.")
    var moveBatchSize = 500

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func validate() throws {
        guard count > 0, batchSize > 0, moveBatchSize > 0 else {
            throw ValidationError("--count, --batch-size and --move-batch-size must be positive")
        }
    }

    func run() async throws {
        var base = try database.configuration()
        base.operationTimeout = .seconds(600)
        // The writer's batches during the move and the reference's (it stops when the move ends, or out of them).
        let writerCount = max(count / 2, batchSize * 40)
        FileHandle.standardError.write(Data("generating and verifying \(count + writerCount) notifications...\n".utf8))
        let batches = try await BenchStoreCommand.workload(count: count + writerCount, batchSize: batchSize)
        let stored = Array(batches.prefix(count / batchSize))
        let writes = Array(batches.dropFirst(count / batchSize))

        var logger = Logger(label: "asnp.bench.move", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        let moveBatchSize = self.moveBatchSize
        let report = try await ScratchDatabase.with(on: base, prefix: "asnp_bench_move", logger: logger) {
            configuration in
            try await NotificationStore.withRunning(configuration: configuration, logger: logger) { store in
                try await store.migrate()
                FileHandle.standardError.write(Data("storing \(stored.count * batchSize) notifications...\n".utf8))
                for batch in stored { _ = try await store.write(batch) }
                // As versions before schema 6 left them: body and decoded JSON in the row.
                _ = try await store.execute(
                    """
                    UPDATE notifications n SET legacy_raw_body = convert_from(asnp_raw_body(b.body), 'UTF8'),
                        legacy_decoded = b.decoded
                    FROM notification_bodies b
                    WHERE b.notification_uuid = n.notification_uuid AND b.received_at = n.received_at
                    """
                )
                _ = try await store.execute("DELETE FROM notification_bodies")
                _ = try await store.execute("VACUUM ANALYZE")

                let reference = writes.count / 5
                let alone = try await Self.write(Array(writes.prefix(reference)), to: store) { false }
                let moveDone = Mutex(false)
                let start = ContinuousClock.now
                async let moving = {
                    defer { moveDone.withLock { $0 = true } }
                    return try await store.moveBodies(batchSize: moveBatchSize)
                }()
                let during = try await Self.write(Array(writes.dropFirst(reference)), to: store) {
                    moveDone.withLock { $0 }
                }
                let moved = try await moving
                let moveSeconds = (ContinuousClock.now - start).seconds
                return Report(
                    moved: moved,
                    moveSeconds: moveSeconds,
                    movedPerSecond: Double(moved) / moveSeconds,
                    writerAlone: alone,
                    writerDuringMove: during,
                    writerCoveredMove: min(1, during.seconds / moveSeconds)
                )
            }
        }
        if json {
            TextColumns.printJSON(report)
        } else {
            print(report.text(count: count))
        }
    }

    /// Writes `batches` one after another, measuring each, until `done()` says to stop.
    private static func write(
        _ batches: [NotificationBatch],
        to store: NotificationStore,
        done: () -> Bool
    ) async throws -> WriterPhase {
        var latencies: [Double] = []
        var rows = 0
        let start = ContinuousClock.now
        for batch in batches where !done() {
            let batchStart = ContinuousClock.now
            rows += try await store.write(batch).storedNotifications.count
            latencies.append((ContinuousClock.now - batchStart).seconds * 1_000)
        }
        return WriterPhase(latenciesMilliseconds: latencies, rows: rows, seconds: (ContinuousClock.now - start).seconds)
    }

    struct WriterPhase: Encodable {
        var batches: Int
        var rows: Int
        var seconds: Double
        var rowsPerSecond: Double
        var medianMilliseconds: Double
        var p99Milliseconds: Double
        var maxMilliseconds: Double

        init(latenciesMilliseconds: [Double], rows: Int, seconds: Double) {
            let sorted = latenciesMilliseconds.sorted()
            batches = sorted.count
            self.rows = rows
            self.seconds = seconds
            rowsPerSecond = Double(rows) / seconds
            medianMilliseconds = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
            p99Milliseconds = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
            maxMilliseconds = sorted.last ?? 0
        }
    }

    struct Report: Encodable {
        var moved: Int
        var moveSeconds: Double
        var movedPerSecond: Double
        var writerAlone: WriterPhase
        var writerDuringMove: WriterPhase
        /// The part of the move the writer wrote through (it stops at the move's end, or out of batches).
        var writerCoveredMove: Double

        func text(count: Int) -> String {
            func line(_ name: String, _ phase: WriterPhase) -> String {
                String(
                    format: "%@: %d batches, %.0f rows/s, batch latency median %.1f ms, p99 %.1f ms, max %.1f ms",
                    name,
                    phase.batches,
                    phase.rowsPerSecond,
                    phase.medianMilliseconds,
                    phase.p99Milliseconds,
                    phase.maxMilliseconds
                )
            }
            return [
                String(
                    format: "moved %d of %d bodies in %.1f s (%.0f rows/s)",
                    moved,
                    count,
                    moveSeconds,
                    movedPerSecond
                ),
                line("writer alone (reference)", writerAlone),
                line("writer during the move", writerDuringMove)
                    + String(format: " (through %.0f%% of the move)", writerCoveredMove * 100),
                String(
                    format: "during / alone: %.2f× rows/s, %.2f× p99 latency",
                    writerDuringMove.rowsPerSecond / writerAlone.rowsPerSecond,
                    writerDuringMove.p99Milliseconds / max(writerAlone.p99Milliseconds, 0.001)
                ),
            ].joined(separator: "\n")
        }
    }
}
