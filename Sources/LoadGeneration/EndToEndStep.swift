import Foundation

/// One rate step of `asnp-bench e2e`.
package struct EndToEndStep {
    /// The pipeline's processes a step measures.
    package enum Role: String, CaseIterable, Sendable {
        case ingress
        case workers
        case mockBroker = "mock"
    }

    /// Notifications/s asked for, and posted.
    package var offered: Double
    package var posted: Double
    /// Distinct notifications posted for the first time, per second: what there is to store (the workload repeats
    /// 5% of its bodies as Apple's retries do; a repeat is deduplicated, never a new row).
    package var new: Double
    package var ok: Int
    package var notOK: Int
    /// Ingress latency from when each request was due, milliseconds.
    package var p50: Double
    package var p99: Double
    /// Notifications stored per second during the step.
    package var stored: Double
    /// Decoded events the workers published per second during the step (after their batches committed).
    package var published: Double
    /// The workers' lag at the step's end: notifications answered 200 and not yet stored. Counted in the database
    /// rather than read as the group's Kafka lag, which takes a watermark request per partition: on a saturated
    /// machine that took seconds, in which the workers drained what it was meant to show.
    package var backlog: Int
    /// What the raw topic was written during the step, as the ingress's producer reported it.
    package var rawTopic: RawTopic
    /// Where the cores went during the step.
    package var cpu: CPU
    /// Resident memory at the step's end, bytes: the ingress, the largest worker, the mock broker.
    package var memory: Memory

    package init(
        offered: Double,
        posted: Double,
        new: Double,
        ok: Int,
        notOK: Int,
        p50: Double,
        p99: Double,
        stored: Double,
        published: Double,
        backlog: Int,
        rawTopic: RawTopic,
        cpu: CPU,
        memory: Memory
    ) {
        self.offered = offered
        self.posted = posted
        self.new = new
        self.ok = ok
        self.notOK = notOK
        self.p50 = p50
        self.p99 = p99
        self.stored = stored
        self.published = published
        self.backlog = backlog
        self.rawTopic = rawTopic
        self.cpu = cpu
        self.memory = memory
    }

    /// The raw topic's writes during a step: from the ingress's `asnp_ingress_raw_topic_*` counters, which the
    /// producer's statistics bring up to date every second here (`statistics.interval.ms`).
    package struct RawTopic {
        package var batches: Double
        package var messages: Double
        /// The batches' bytes after compression: what the topic stores per replica.
        package var bytes: Double

        /// Bytes a notification costs the raw topic, per replica; nil before any report.
        package var bytesPerNotification: Double? { messages > 0 ? bytes / messages : nil }
        /// Notifications in a produce batch (what compression works on).
        package var notificationsPerBatch: Double? { batches > 0 ? messages / batches : nil }

        package init(batches: Double, messages: Double, bytes: Double) {
            self.batches = batches
            self.messages = messages
            self.bytes = bytes
        }

        package init(from start: RawTopic, to end: RawTopic) {
            self.init(
                batches: end.batches - start.batches,
                messages: end.messages - start.messages,
                bytes: end.bytes - start.bytes
            )
        }
    }

    /// CPU used during a step, in cores (CPU seconds per second), by process.
    package struct CPU {
        package var ingress: Double
        /// All workers together.
        package var workers: Double
        package var mockBroker: Double
        /// The PostgreSQL server's processes; nil when it is not on this machine.
        package var postgres: Double?
        /// This process: signing is done before the steps, so this is posting.
        package var loadGenerator: Double

        /// The parts together: how much of the machine the pipeline and its load took.
        package var total: Double { ingress + workers + mockBroker + (postgres ?? 0) + loadGenerator }

        package init(ingress: Double, workers: Double, mockBroker: Double, postgres: Double?, loadGenerator: Double) {
            self.ingress = ingress
            self.workers = workers
            self.mockBroker = mockBroker
            self.postgres = postgres
            self.loadGenerator = loadGenerator
        }

        /// The counters a step's CPU is the difference of.
        package struct Sample {
            package var pipeline: [Role: Double]
            package var postgres: Double?
            package var loadGenerator: Double
            package var instant: ContinuousClock.Instant

            package init(
                pipeline: [Role: Double],
                postgres: Double?,
                loadGenerator: Double,
                instant: ContinuousClock.Instant
            ) {
                self.pipeline = pipeline
                self.postgres = postgres
                self.loadGenerator = loadGenerator
                self.instant = instant
            }
        }

        package init(from start: Sample, to end: Sample) {
            let elapsed = start.instant.duration(to: end.instant).seconds
            func cores(_ role: Role) -> Double {
                ((end.pipeline[role] ?? 0) - (start.pipeline[role] ?? 0)) / elapsed
            }
            ingress = cores(.ingress)
            workers = cores(.workers)
            mockBroker = cores(.mockBroker)
            if let first = start.postgres, let last = end.postgres { postgres = (last - first) / elapsed }
            loadGenerator = (end.loadGenerator - start.loadGenerator) / elapsed
        }
    }

    /// The CPU each process spent per notification stored, in verifications: one verification's CPU is what `asnp
    /// verify --jsonl` spends per notification with all `cores` at `verificationRate` (the work no pipeline can
    /// skip). Nil when nothing was stored.
    package func cpuPerNotification(
        verificationRate: Double,
        cores: Int
    ) -> (ingress: Double, workers: Double, postgres: Double?)? {
        guard stored > 0, verificationRate > 0, cores > 0 else { return nil }
        let verification = Double(cores) / verificationRate
        func inVerifications(_ cores: Double) -> Double { cores / stored / verification }
        return (inVerifications(cpu.ingress), inVerifications(cpu.workers), cpu.postgres.map(inVerifications))
    }

    /// Resident memory of the pipeline's processes.
    package struct Memory {
        package var ingress: Int
        /// The largest worker.
        package var worker: Int
        package var mockBroker: Int

        package init(ingress: Int, worker: Int, mockBroker: Int) {
            self.ingress = ingress
            self.worker = worker
            self.mockBroker = mockBroker
        }

        package static let csvHeader = ["ingress_rss_mb", "worker_rss_mb", "mock_rss_mb"]
        package var megabytes: [String] { [ingress, worker, mockBroker].map { String($0 / 1_048_576) } }
    }

    private static let columns: [(header: String, csv: String, value: @Sendable (EndToEndStep) -> String)] = [
        ("offered/s", "offered", { String(format: "%.0f", $0.offered) }),
        ("posted/s", "posted", { String(format: "%.0f", $0.posted) }),
        ("new/s", "new", { String(format: "%.0f", $0.new) }),
        ("200", "ok", { String($0.ok) }),
        ("other", "other", { String($0.notOK) }),
        ("p50 ms", "p50_ms", { String(format: "%.1f", $0.p50) }),
        ("p99 ms", "p99_ms", { String(format: "%.1f", $0.p99) }),
        ("stored/s", "stored", { String(format: "%.0f", $0.stored) }),
        ("events/s", "published", { String(format: "%.0f", $0.published) }),
        ("lag", "backlog", { String($0.backlog) }),
        (
            "raw B/n", "raw_bytes_per_notification",
            { $0.rawTopic.bytesPerNotification.map { String(format: "%.0f", $0) } ?? "-" }
        ),
        (
            "n/batch", "raw_notifications_per_batch",
            { $0.rawTopic.notificationsPerBatch.map { String(format: "%.2f", $0) } ?? "-" }
        ),
        ("ingress", "cpu_ingress", { String(format: "%.2f", $0.cpu.ingress) }),
        ("workers", "cpu_workers", { String(format: "%.2f", $0.cpu.workers) }),
        ("mock", "cpu_mock_broker", { String(format: "%.2f", $0.cpu.mockBroker) }),
        ("pg", "cpu_postgres", { $0.cpu.postgres.map { String(format: "%.2f", $0) } ?? "-" }),
        ("loadgen", "cpu_load_generator", { String(format: "%.2f", $0.cpu.loadGenerator) }),
        ("sum", "cpu_total", { String(format: "%.2f", $0.cpu.total) }),
    ]

    package static func print(_ rows: [EndToEndStep], title: String) {
        Swift.print(title)
        Swift.print(
            "raw B/n: bytes a notification cost the raw topic (compressed, per replica); n/batch: notifications per "
                + "produce batch; CPU in cores: the ingress, the workers together, the mock broker, PostgreSQL, the "
                + "load generator (this process), their sum; RSS at the step's end: ingress/largest worker/mock broker"
        )
        let header = columns.map(\.header) + ["RSS MB i/w/m"]
        let lines = rows.map { row in columns.map { $0.value(row) } + [row.memory.megabytes.joined(separator: "/")] }
        let widths = header.indices.map { column in
            ([header[column]] + lines.map { $0[column] }).map(\.count).max() ?? 0
        }
        for line in [header] + lines {
            Swift.print(
                zip(line, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
            )
        }
    }

    /// The rows as CSV, for plotting (Benchmarks/python/plot_e2e.py).
    package static func csv(_ rows: [EndToEndStep]) -> String {
        let lines =
            [(columns.map(\.csv) + Memory.csvHeader).joined(separator: ",")]
            + rows.map { row in (columns.map { $0.value(row) } + row.memory.megabytes).joined(separator: ",") }
        return lines.joined(separator: "\n") + "\n"
    }
}
