import ArgumentParser
import CommandSupport
import Foundation
import KafkaClient
import Logging
import NIOCore

/// `asnp-bench kafka`: acknowledged produce and batch-poll consume throughput against the mock cluster, side by side
/// with kcat (librdkafka's own command-line client) in the same run.
struct BenchKafkaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kafka",
        abstract: "Measure Kafka produce (acknowledged) and consume (batch poll) throughput against kcat.",
        discussion: """
            Starts `asnp kafka-mock` as a separate process (so neither client pays for the broker's CPU), then \
            produces --messages keyed messages of --message-size bytes with the KafkaClient producer (idempotent, \
            acks=all, every message acknowledged) and with `kcat -P` under the same settings, and consumes them \
            with the KafkaClient consumer (consumer group, batch poll), with `kcat -G` (consumer group) and with \
            `kcat -C` (partitions assigned directly, no group). Reports messages/s of \
            wall-clock time and messages per CPU-second of the client process (user + system), the second being \
            the per-core figure, each with its ratio to kcat.

            The mock keeps about 5 MB per partition; --partitions must be high enough that --messages fit \
            (the command refuses settings that would not).
            """
    )

    enum Baseline: String, ExpressibleByArgument, CaseIterable {
        case kcat
        case none
    }

    @Option(help: "Messages to produce and consume per client.")
    var messages = 200_000

    @Option(help: "Value size in bytes.")
    var messageSize = 1_024

    @Option(help: "Partitions of each benchmark topic.")
    var partitions = 64

    @Option(help: "Distinct message keys.")
    var keys = 10_000

    @Option(help: "Rounds of every measurement; the table shows each figure's median.")
    var rounds = 3

    @Option(help: "The baseline client to run in the same run: kcat or none.")
    var baseline: Baseline = .kcat

    @Option(help: "The kcat executable.")
    var kcat = "kcat"

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    /// The mock deletes a partition's oldest messages beyond about 5 MB; stay well below.
    static let mockBytesPerPartition = 4_500_000

    /// Bodies of at most `largestBody` bytes that one partition of the mock holds safely: half of
    /// ``mockBytesPerPartition``, since keys and consumption spread unevenly over partitions; at least one.
    static func bodiesKeptSafely(largestBody: Int) -> Int {
        max(1, mockBytesPerPartition / 2 / max(1, largestBody))
    }

    func validate() throws {
        guard messages > 0, messageSize > 0, partitions > 0, keys > 0, rounds > 0 else {
            throw ValidationError("--messages, --message-size, --partitions, --keys and --rounds must be positive")
        }
        let perPartition = (messages / partitions + 1) * (messageSize + 64)
        guard perPartition <= Self.mockBytesPerPartition else {
            throw ValidationError(
                "\(messages) messages of \(messageSize) bytes over \(partitions) partitions is about \(perPartition / 1_000) kB "
                    + "per partition; the mock keeps about 5 MB per partition. Raise --partitions or lower --messages."
            )
        }
    }

    func run() async throws {
        var logger = Logger(label: "asnp.bench.kafka", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .critical
        let workload = KafkaBenchWorkload(messages: messages, messageSize: messageSize, keys: keys)
        // Fresh topics every round, so no partition nears the mock's limit.
        let topics = (1...rounds).flatMap {
            ["--topic", "asnp-produced-\($0):\(partitions)", "--topic", "kcat-produced-\($0):\(partitions)"]
        }
        let mock = try await KafkaMockChild.start(
            executable: ASNPBench.pipelineExecutable(),
            arguments: topics
        )
        defer { mock.stop() }
        let cluster = KafkaClusterConfiguration(bootstrapServers: mock.bootstrapServers)

        var rows: [KafkaBenchRow] = []
        for round in 1...rounds {
            let ours = "asnp-produced-\(round)"
            let theirs = "kcat-produced-\(round)"
            rows.append(try await produce(workload, topic: ours, cluster: cluster, logger: logger))
            if baseline == .kcat {
                rows.append(try kcatProduce(workload, topic: theirs, bootstrap: mock.bootstrapServers))
            }
            // Both clients consume what our producer wrote.
            rows.append(try await consume(workload, topic: ours, cluster: cluster, logger: logger))
            if baseline == .kcat {
                rows += try kcatConsume(workload, topic: ours, bootstrap: mock.bootstrapServers)
            }
        }
        KafkaBenchReport(
            title: "Kafka, \(messages) messages of \(messageSize) B, \(keys) keys, \(partitions) partitions, "
                + "librdkafka mock cluster in its own process; median of \(rounds) round(s)",
            rows: KafkaBenchRow.medians(of: rows)
        ).print(json: json)
    }

    // MARK: - KafkaClient

    private func produce(
        _ workload: KafkaBenchWorkload,
        topic: String,
        cluster: KafkaClusterConfiguration,
        logger: Logger
    ) async throws
        -> KafkaBenchRow
    {
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(cluster: cluster), logger: logger)
        return try await withThrowingTaskGroup(of: KafkaBenchRow?.self) { group in
            group.addTask {
                try await producer.run()
                return nil
            }
            // Connection, metadata and the idempotent producer id are set up before the clock starts.
            try await producer.send(
                KafkaProducerMessage(topic: topic, key: "warm-up", value: ByteBuffer(string: "warm-up"))
            )
            let measurement = KafkaBenchMeasurement.start()
            // A few batches in flight at once, as several ingress requests would be.
            let failures = await withTaskGroup(of: Int.self) { batches in
                let batchSize = 5_000
                for start in stride(from: 0, to: workload.messages, by: batchSize) {
                    batches.addTask {
                        let range = start..<min(start + batchSize, workload.messages)
                        let results = await producer.send(
                            contentsOf: range.map { workload.message(topic: topic, index: $0) }
                        )
                        return results.filter { (try? $0.get()) == nil }.count
                    }
                }
                return await batches.reduce(0, +)
            }
            let row = measurement.finish(
                operation: "produce, acknowledged",
                client: "asnp KafkaClient",
                messages: workload.messages
            )
            group.cancelAll()
            guard failures == 0 else {
                throw BenchFailure("\(failures) messages were not acknowledged; the figure would be wrong")
            }
            return row
        }
    }

    private func consume(
        _ workload: KafkaBenchWorkload,
        topic: String,
        cluster: KafkaClusterConfiguration,
        logger: Logger
    ) async throws
        -> KafkaBenchRow
    {
        var configuration = KafkaConsumerConfiguration(cluster: cluster, groupID: "bench-\(UUID())", topics: [topic])
        configuration.pollMaxWait = .milliseconds(100)
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        // The warm-up message, then the measured ones. The clock starts at the first batch: the group join
        // (seconds on the mock) is not throughput.
        let expected = workload.messages + 1
        var received = 0
        var measurement: KafkaBenchMeasurement?
        let deadline = ContinuousClock.now.advanced(by: .seconds(120))
        while received < expected, ContinuousClock.now < deadline {
            for case .messages(let batch) in try await consumer.poll(maxMessages: 2_000, maxWait: .milliseconds(100)) {
                if measurement == nil { measurement = .start() }
                received += batch.count
            }
        }
        let row = (measurement ?? .start()).finish(
            operation: "consume, consumer group",
            client: "asnp KafkaClient",
            messages: received - 1
        )
        try await consumer.close()
        guard received == expected else {
            throw BenchFailure("consumed \(received) of \(expected) messages; the figure would be wrong")
        }
        return row
    }

    // MARK: - kcat

    private func kcatProduce(_ workload: KafkaBenchWorkload, topic: String, bootstrap: String) throws -> KafkaBenchRow {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-bench-kafka-\(UUID()).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        try workload.kcatInput().write(to: file)
        // The same guarantees and batching as our producer.
        let settings = [
            "enable.idempotence=true", "acks=all", "linger.ms=2", "compression.codec=lz4", "partitioner=murmur2_random",
        ].flatMap { ["-X", $0] }
        let measurement = KafkaBenchMeasurement.start()
        let status = try runChild(kcat, ["-P", "-b", bootstrap, "-t", topic, "-K", "\t", "-l", file.path] + settings)
        guard status == 0 else { throw BenchFailure("kcat -P failed (exit \(status)); is kcat installed?") }
        return measurement.finish(
            operation: "produce, acknowledged",
            client: "kcat -P",
            messages: workload.messages,
            child: true
        )
    }

    /// kcat consuming the same messages twice: as a consumer-group member (`-G`, the like-for-like reference) and
    /// with partitions assigned directly (`-C`, librdkafka's lightest path). The group run's wall-clock time includes
    /// the group join (3 s on the mock); its CPU time, the figure to compare, hardly does.
    private func kcatConsume(_ workload: KafkaBenchWorkload, topic: String, bootstrap: String) throws -> [KafkaBenchRow]
    {
        // -e: exit at the end of every partition; -f '': print nothing, so output costs nothing.
        let group = KafkaBenchMeasurement.start()
        let groupStatus = try runChild(
            kcat,
            [
                "-b", bootstrap, "-G", "bench-kcat-\(UUID())", "-X", "auto.offset.reset=earliest", "-e", "-q", "-f", "",
                topic,
            ]
        )
        guard groupStatus == 0 else { throw BenchFailure("kcat -G failed (exit \(groupStatus))") }
        var groupRow = group.finish(
            operation: "consume, consumer group",
            client: "kcat -G",
            messages: workload.messages,
            child: true
        )
        groupRow.wallIncludesGroupJoin = true
        let assigned = KafkaBenchMeasurement.start()
        let assignedStatus = try runChild(
            kcat,
            ["-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", "-f", ""]
        )
        guard assignedStatus == 0 else { throw BenchFailure("kcat -C failed (exit \(assignedStatus))") }
        let assignedRow = assigned.finish(
            operation: "consume, assigned partitions",
            client: "kcat -C",
            messages: workload.messages,
            child: true
        )
        return [groupRow, assignedRow]
    }

    private func runChild(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
