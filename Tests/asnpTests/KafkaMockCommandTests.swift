import AppStoreTestSupport
import CommandSupport
import Foundation
import KafkaClient
import Logging
import NIOCore
import Testing

@testable import asnp

/// `asnp kafka-mock` with an independent client: kcat (Debian's `kcat`, installed by scripts/bootstrap) must read
/// what our producer wrote, and our consumer what kcat wrote.
@Suite("asnp kafka-mock with kcat", .tags(.process))
struct KafkaMockCommandTests {
    static let logger: Logger = {
        var logger = Logger(label: "test.kafka-mock")
        logger.logLevel = .critical
        return logger
    }()

    @Test("kcat reads every keyed message our producer wrote through asnp kafka-mock, in order per key, and vice versa")
    func kcatInterop() async throws {
        let kcat = try await runProgram("sh", ["-c", "command -v kcat"])
        try #require(kcat.status == 0, "kcat is not installed: run scripts/bootstrap (apt-get install kcat)")

        let mock = try await KafkaMockChild.start(
            executable: ASNPProcess.executable,
            arguments: ["--brokers", "2", "--topic", "interop:4", "--topic", "back:3"]
        )
        let bootstrap = mock.bootstrapServers
        #expect(bootstrap.split(separator: ",").count == 2)

        // Our producer → kcat.
        let sent = (0..<200).map { (key: "subscription-\($0 % 20)", value: "event-\($0 / 20)") }
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(cluster: KafkaClusterConfiguration(bootstrapServers: bootstrap)),
            logger: Self.logger
        )
        let reports = await withThrowingTaskGroup(of: [Result<KafkaDeliveryReport, KafkaError>]?.self) { group in
            group.addTask {
                try await producer.run()
                return nil
            }
            let reports = await producer.send(
                contentsOf: sent.map {
                    KafkaProducerMessage(
                        topic: "interop",
                        key: $0.key,
                        value: ByteBuffer(string: $0.value),
                        headers: [KafkaHeader(key: "version", string: "2")]
                    )
                }
            )
            group.cancelAll()
            return reports
        }
        #expect(reports.allSatisfy { (try? $0.get()) != nil } == true)

        let read = try await runProgram(
            "kcat",
            ["-C", "-b", bootstrap, "-t", "interop", "-o", "beginning", "-e", "-q", "-f", "%k\t%s\t%p\t%o\t%h\n"]
        )
        #expect(read.status == 0)
        let lines = String(decoding: read.output, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: "\t", omittingEmptySubsequences: false)
        }
        #expect(lines.count == sent.count)
        for (key, records) in Dictionary(grouping: lines, by: { String($0[0]) }) {
            #expect(records.map { String($0[1]) } == sent.filter { $0.key == key }.map(\.value), "order of \(key)")
            #expect(Set(records.map { $0[2] }).count == 1, "one partition per key")
        }
        #expect(lines.allSatisfy { $0[4] == "version=2" }, "headers reach kcat")
        // Coordinates agree with our delivery reports.
        let reported = Set(reports.compactMap { try? $0.get() }.map { "\($0.topicPartition.partition)/\($0.offset)" })
        #expect(Set(lines.map { "\($0[2])/\($0[3])" }) == reported)

        // kcat → our consumer.
        let back = (0..<60).map { "k\($0 % 6):v\($0 / 6)" }.joined(separator: "\n") + "\n"
        #expect(
            try await runProgram("kcat", ["-P", "-b", bootstrap, "-t", "back", "-K:"], input: Data(back.utf8)).status
                == 0
        )
        var configuration = KafkaConsumerConfiguration(
            cluster: KafkaClusterConfiguration(bootstrapServers: bootstrap),
            groupID: "interop",
            topics: ["back"]
        )
        configuration.pollMaxWait = .milliseconds(50)
        let consumer = try KafkaConsumer(configuration: configuration, logger: Self.logger)
        var received: [KafkaMessage] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while received.count < 60, ContinuousClock.now < deadline {
            for event in try await consumer.poll(maxMessages: 100, maxWait: .milliseconds(100)) {
                if case .messages(let messages) = event { received += messages }
            }
        }
        try await consumer.close()
        #expect(received.count == 60)
        for key in (0..<6).map({ "k\($0)" }) {
            let values = received.filter { $0.key.map { String(buffer: $0) } == key }.map { String(buffer: $0.value) }
            #expect(values == (0..<10).map { "v\($0)" }, "order of \(key)")
        }

        #expect(await mock.terminate() == 0, "SIGTERM stops asnp kafka-mock cleanly")
    }
}
