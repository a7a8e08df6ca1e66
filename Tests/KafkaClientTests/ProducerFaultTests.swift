import AppStoreTestSupport
import KafkaClient
import NIOCore
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@testable import KafkaClient

@Suite("Producer under faults: broker not answering, refused requests, full queue, shutdown", .tags(.fault))
struct ProducerFaultTests {
    /// Every message in `topic`, read back by a fresh consumer group.
    static func readBack(_ cluster: KafkaTestCluster, topic: String, atLeast count: Int) async throws -> [String] {
        let consumer = try KafkaConsumer(
            configuration: cluster.consumerConfiguration(group: "read-back-\(topic)", topics: [topic]),
            logger: cluster.logger
        )
        // To each partition's end as the topic is now (its high watermarks), not to a count: the topic also holds
        // messages that timed out and were stored anyway, so a count can be reached before every partition is read
        // (a loaded run then reported messages delivered and "missing"). Anything beyond would show up too.
        let admin = try KafkaAdminClient(cluster: cluster.mock.clusterConfiguration, logger: cluster.logger)
        let ends = try await admin.watermarks(of: topic)
        let events = try await consumer.collect { events in
            var read: [KafkaTopicPartition: Int64] = [:]
            for message in events.messages {
                read[message.topicPartition] = max(read[message.topicPartition] ?? 0, message.offset + 1)
            }
            let caughtUp = ends.allSatisfy { partition, marks in
                marks.high <= marks.low || (read[partition] ?? 0) >= marks.high
            }
            return caughtUp && events.messages.count >= count
        }
        try await consumer.close()
        return events.messages.map { String(buffer: $0.value) }
    }

    // Faults here hold the broker's answers (round-trip time) or answer with errors rather than take the broker down:
    // librdkafka 2.0.2's mock aborts the process when a downed broker's port was taken before it re-binds it, which
    // a busy test run can make happen (Docs/kafka.md).

    @Test(
        "While the only broker does not answer, send waits; it succeeds once it answers, and the message is stored once"
    )
    func brokerSilentThenBack() async throws {
        let cluster = try KafkaTestCluster(topics: ["raw": 1])
        try await cluster.withProducer(cluster.producerConfiguration(deliveryTimeout: .seconds(30))) { producer in
            try await producer.send(KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: "before")))
            try cluster.mock.setRoundTripTime(.seconds(5), broker: 1)
            let finished = Flag()
            try await withThrowingTaskGroup(of: KafkaDeliveryReport.self) { group in
                group.addTask {
                    defer { finished.set() }
                    return try await producer.send(
                        KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: "during"))
                    )
                }
                try await Task.sleep(for: .seconds(2))
                #expect(!finished.isSet, "no acknowledgement can come from a broker that does not answer")
                try cluster.mock.setRoundTripTime(.zero, broker: 1)
                let report = try #require(try await group.next())
                #expect(report.topicPartition == KafkaTopicPartition(topic: "raw", partition: 0))
                #expect(report.offset == 1)
            }
        }
        #expect(try await Self.readBack(cluster, topic: "raw", atLeast: 2) == ["before", "during"])
    }

    @Test(
        "When the broker refuses writes past the delivery timeout, send fails with MESSAGE_TIMED_OUT and nothing is stored"
    )
    func brokerRefusingPastTimeout() async throws {
        let cluster = try KafkaTestCluster(topics: ["raw": 1])
        try await cluster.withProducer(cluster.producerConfiguration(deliveryTimeout: .seconds(2))) { producer in
            try await cluster.warmUp(producer, for: ["raw"])
            try await producer.send(KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: "stored")))
            // Retriable refusals (no in-sync replicas) for far longer than the delivery timeout.
            cluster.mock.injectErrors(Array(repeating: .notEnoughReplicas, count: 500), into: .produce)
            let error = await #expect(throws: KafkaError.self) {
                try await producer.send(KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: "lost")))
            }
            #expect(error?.code == .messageTimedOut)
            #expect(error?.isRetriable == true)
            #expect(error?.rdKafkaError == "_MSG_TIMED_OUT")
        }
        #expect(try await Self.readBack(cluster, topic: "raw", atLeast: 1) == ["stored"])
    }

    @Test("Transient broker errors are retried without duplicates (idempotent producer)")
    func transientErrorsRetried() async throws {
        let cluster = try KafkaTestCluster(topics: ["raw": 1])
        let values = (0..<20).map { "message-\($0)" }
        try await cluster.withProducer { producer in
            try await producer.send(KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: values[0])))
            cluster.mock.injectErrors([.notEnoughReplicas, .notLeaderForPartition, .requestTimedOut], into: .produce)
            let reports = await producer.send(
                contentsOf: values.dropFirst().map {
                    KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: $0))
                }
            )
            #expect(reports.allSatisfy { (try? $0.get()) != nil })
        }
        #expect(try await Self.readBack(cluster, topic: "raw", atLeast: values.count) == values)
    }

    @Test(
        """
        Transient errors, 100 ms round trips and a 1 s delivery timeout while sends stream in: every message reported \
        delivered is on the topic (some time out: those may or may not be)
        """
    )
    func deliveredMeansStoredUnderErrorsAndTimeouts() async throws {
        let cluster = try KafkaTestCluster(brokers: 3, topics: ["raw": 8])
        let values = (0..<1_500).map { "message-\($0)" }
        let configuration = cluster.producerConfiguration(deliveryTimeout: .seconds(1))
        let delivered = try await cluster.withProducer(configuration) { producer in
            // Connected to every leader first; the first connections can take longer than the 1 s timeout, on a
            // loaded machine several times over, so each is tried until it is acknowledged (the count of tries
            // used to be 5).
            try await cluster.warmUp(producer, for: ["raw"])
            let deadline = ContinuousClock.now.advanced(by: KafkaTestCluster.readinessLimit)
            for partition in 0..<8 {
                while true {
                    var message = KafkaProducerMessage(topic: "raw", key: nil, value: ByteBuffer(string: "warm-up"))
                    message.partition = Int32(partition)
                    do throws(KafkaError) {
                        try await producer.send(message)
                        break
                    } catch {
                        guard error.isRetriable, ContinuousClock.now < deadline else { throw error }
                    }
                }
            }
            for broker in cluster.mock.brokerIDs {
                try cluster.mock.setRoundTripTime(.milliseconds(100), broker: broker)
            }
            let transient: [KafkaMockCluster.BrokerError] = [
                .notEnoughReplicas, .notLeaderForPartition, .requestTimedOut, .notEnoughReplicasAfterAppend,
                .leaderNotAvailable, .unknownTopicOrPartition,
            ]
            cluster.mock.injectErrors(Array(repeating: transient, count: 8).flatMap { $0 }, into: .produce)
            return await withTaskGroup(of: String?.self) { group in
                for (index, value) in values.enumerated() {
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(index * 4))
                        let message = KafkaProducerMessage(
                            topic: "raw",
                            key: "key-\(index % 97)",
                            value: ByteBuffer(string: value)
                        )
                        return (try? await producer.send(message)) == nil ? nil : value
                    }
                }
                return await group.reduce(into: Set<String>()) { if let value = $1 { $0.insert(value) } }
            }
        }
        for broker in cluster.mock.brokerIDs { try cluster.mock.setRoundTripTime(.zero, broker: broker) }
        let stored = Set(try await Self.readBack(cluster, topic: "raw", atLeast: delivered.count + 8))
        // With several requests in flight, librdkafka 2.0.2 took a later request's success as the acknowledgement of
        // a failed earlier one, which the mock never stored (Docs/kafka.md): 3 to 7 such messages in every run.
        let missing = delivered.subtracting(stored)
        #expect(missing.isEmpty, "reported delivered, not on the topic: \(missing.sorted())")
    }

    @Test("A permanent refusal fails the send with a clear error and never counts as delivered")
    func permanentRefusal() async throws {
        let cluster = try KafkaTestCluster(topics: ["raw": 1])
        try await cluster.withProducer { producer in
            try await producer.send(KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: "accepted")))
            cluster.mock.injectErrors([.topicAuthorizationFailed], into: .produce)
            let error = await #expect(throws: KafkaError.self) {
                try await producer.send(
                    KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: "refused"))
                )
            }
            #expect(error?.code == .refused)
            #expect(error?.isRetriable == false)
            #expect(error?.rdKafkaError == "TOPIC_AUTHORIZATION_FAILED")
        }
        #expect(try await Self.readBack(cluster, topic: "raw", atLeast: 1) == ["accepted"])
    }

    @Test("A full local queue makes senders wait instead of failing")
    func backPressure() async throws {
        let cluster = try KafkaTestCluster(topics: ["raw": 4])
        try cluster.mock.setRoundTripTime(.milliseconds(20), broker: 1)
        var configuration = cluster.producerConfiguration(deliveryTimeout: .seconds(60))
        configuration.maxQueuedMessages = 16
        let messages = SequencedMessage.make(count: 2_000, keys: 50)
        let (outcomes, roomWaits) = try await cluster.withProducer(configuration) { producer in
            // Many tasks at once, and batches larger than the queue.
            let outcomes = await withTaskGroup(of: [Result<KafkaDeliveryReport, KafkaError>].self) { group in
                for chunk in stride(from: 0, to: messages.count, by: 100) {
                    group.addTask {
                        await producer.send(
                            contentsOf: messages[chunk..<chunk + 100].map { $0.producerMessage(topic: "raw") }
                        )
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
            return (outcomes, producer.roomWaits)
        }
        let failures = outcomes.compactMap { outcome -> KafkaError? in
            if case .failure(let error) = outcome { return error }
            return nil
        }
        #expect(failures.isEmpty, "\(failures.first.map(String.init(describing:)) ?? "")")
        #expect(outcomes.count == messages.count)
        #expect(roomWaits > 0, "the queue was full and senders waited")
    }

    @Test("Graceful shutdown waits for every outstanding message; sends after it fail with SHUT_DOWN")
    func gracefulShutdownDrains() async throws {
        let cluster = try KafkaTestCluster(topics: ["raw": 4])
        try cluster.mock.setRoundTripTime(.milliseconds(300), broker: 1)
        // No message is acknowledged until the shutdown has begun: every produce request is refused (retriable,
        // retried by the producer) until the errors are cleared.
        // The delivery timeout leaves a loaded machine time to hand all of them over.
        cluster.mock.injectErrors(Array(repeating: .notEnoughReplicas, count: 100_000), into: .produce)
        let producer = try KafkaProducer(
            configuration: cluster.producerConfiguration(deliveryTimeout: .seconds(60)),
            logger: cluster.logger
        )
        let messages = SequencedMessage.make(count: 500, keys: 20)
        let outcomes = try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: [Result<KafkaDeliveryReport, KafkaError>]?.self) { group in
                group.addTask {
                    try await producer.run()
                    return nil
                }
                group.addTask {
                    await producer.send(contentsOf: messages.map { $0.producerMessage(topic: "raw") })
                }
                // Shut down once every message is outstanding, not after a fixed 100 ms, which a loaded machine can
                // spend before the send begins (the messages then fail as sent after the shutdown).
                let outstanding = await eventually { producer.queuedMessages == messages.count }
                #expect(outstanding, "every message was handed to librdkafka and none acknowledged yet")
                trigger.triggerGracefulShutdown()
                cluster.mock.clearInjectedErrors(for: .produce)
                var outcomes: [Result<KafkaDeliveryReport, KafkaError>] = []
                while let result = try await group.next() {
                    if let result { outcomes = result }
                }
                return outcomes
            }
        }
        #expect(outcomes.count == messages.count)
        #expect(outcomes.allSatisfy { (try? $0.get()) != nil }, "the drain waits for acknowledgements")
        let late = await #expect(throws: KafkaError.self) {
            try await producer.send(KafkaProducerMessage(topic: "raw", key: "late", value: ByteBuffer(string: "late")))
        }
        #expect(late?.code == .shutDown)
        #expect(try await Self.readBack(cluster, topic: "raw", atLeast: messages.count).count == messages.count)
    }

    @Test(
        "If the cluster does not answer at shutdown, the drain gives up after its timeout and fails, never acknowledges, what is left"
    )
    func shutdownWithBrokerDown() async throws {
        let cluster = try KafkaTestCluster(topics: ["raw": 1])
        var configuration = cluster.producerConfiguration(deliveryTimeout: .seconds(60))
        configuration.shutdownFlushTimeout = .seconds(1)
        let producer = try KafkaProducer(configuration: configuration, logger: cluster.logger)
        let outcome = try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Result<KafkaDeliveryReport, KafkaError>?.self) { group in
                group.addTask {
                    try await producer.run()
                    return nil
                }
                try await producer.send(
                    KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: "first"))
                )
                // Longer than any stall of a loaded test process: with 10 s, a run that stalled that long between
                // the send and the flush's end saw the answer come, and the message delivered.
                try cluster.mock.setRoundTripTime(.seconds(120), broker: 1)
                group.addTask {
                    await producer.send(contentsOf: [
                        KafkaProducerMessage(topic: "raw", key: "k", value: ByteBuffer(string: "stuck"))
                    ])[0]
                }
                // Shut down once it is outstanding (the broker holds its answer), not after a fixed wait.
                let outstanding = await eventually { producer.queuedMessages == 1 }
                #expect(outstanding, "the message was handed to librdkafka")
                trigger.triggerGracefulShutdown()
                var outcome: Result<KafkaDeliveryReport, KafkaError>?
                while let result = try await group.next() {
                    if let result { outcome = result }
                }
                return outcome
            }
        }
        guard case .failure(let error) = try #require(outcome) else {
            Issue.record("a message the cluster never saw must not be reported delivered")
            return
        }
        #expect(error.code == .shutDown)
    }
}
