import AppStoreTestSupport
import Logging
import Testing

@testable import KafkaClient

@Suite("Configuration: librdkafka properties and clear errors", .tags(.fast))
struct ConfigurationTests {
    let cluster = KafkaClusterConfiguration(bootstrapServers: "broker-1:9092, broker-2:9092")

    @Test("The producer is always idempotent with acks=all and the delivery timeout as message.timeout.ms")
    func producerGuarantees() throws {
        var configuration = KafkaProducerConfiguration(cluster: cluster)
        configuration.deliveryTimeout = .milliseconds(1_500)
        let properties = try configuration.properties()
        #expect(properties["enable.idempotence"] == "true")
        #expect(properties["acks"] == "all")
        #expect(properties["message.timeout.ms"] == "1500")
        #expect(properties["bootstrap.servers"] == "broker-1:9092,broker-2:9092")
    }

    @Test(
        """
        Compression's level and the statistics interval reach librdkafka when set, give way to kafka.properties, and \
        are checked
        """
    )
    func compressionLevelAndStatistics() throws {
        var configuration = KafkaProducerConfiguration(cluster: cluster)
        let defaults = try configuration.properties()
        #expect(defaults["compression.level"] == nil && defaults["statistics.interval.ms"] == nil)
        configuration.compression = "zstd"
        configuration.compressionLevel = 1
        configuration.statisticsInterval = .seconds(10)
        let set = try configuration.properties()
        #expect(set["compression.codec"] == "zstd" && set["compression.level"] == "1")
        #expect(set["statistics.interval.ms"] == "10000")
        configuration.cluster.additionalProperties["statistics.interval.ms"] = "1000"
        #expect(try configuration.properties()["statistics.interval.ms"] == "1000")
        configuration.compressionLevel = 13
        #expect(throws: KafkaError.self) { _ = try configuration.properties() }
    }

    @Test("The consumer never commits or stores offsets by itself")
    func consumerManualOffsets() throws {
        let properties = try KafkaConsumerConfiguration(cluster: cluster, groupID: "workers", topics: ["raw"])
            .properties()
        #expect(properties["enable.auto.commit"] == "false")
        #expect(properties["enable.auto.offset.store"] == "false")
        #expect(properties["partition.assignment.strategy"] == "cooperative-sticky")
        #expect(properties["group.id"] == "workers")
    }

    @Test(
        "Properties this layer manages for its guarantees cannot be overridden",
        arguments: ["enable.auto.commit", "acks", "enable.idempotence", "group.id", "bootstrap.servers"]
    )
    func managedPropertiesRefused(key: String) throws {
        var cluster = cluster
        cluster.additionalProperties[key] = "x"
        var producer = KafkaProducerConfiguration(cluster: cluster)
        producer.cluster = cluster
        let consumer = KafkaConsumerConfiguration(cluster: cluster, groupID: "workers", topics: ["raw"])
        let error = #expect(throws: KafkaError.self) {
            _ = try producer.properties()
            _ = try consumer.properties()
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.description.contains(key) == true)
    }

    @Test("Bootstrap servers must be host:port")
    func bootstrapServers() {
        for servers in ["", "broker", "broker:", ":9092", "broker:99999"] {
            let error = #expect(throws: KafkaError.self) {
                _ = try KafkaProducerConfiguration(cluster: KafkaClusterConfiguration(bootstrapServers: servers))
                    .properties()
            }
            #expect(error?.code == .invalidConfiguration, "\(servers)")
        }
    }

    @Test("librdkafka's own checks name the property; details are withheld for secret properties")
    func librdkafkaChecks() throws {
        var unknown = cluster
        unknown.additionalProperties["no.such.property"] = "1"
        let unknownError = #expect(throws: KafkaError.self) {
            _ = try KafkaProducer(
                configuration: KafkaProducerConfiguration(cluster: unknown),
                logger: Logger(label: "test")
            )
        }
        #expect(unknownError?.description.contains("no.such.property") == true)

        var invalid = cluster
        invalid.additionalProperties["socket.timeout.ms"] = "-5"
        let invalidError = #expect(throws: KafkaError.self) {
            _ = try KafkaProducer(
                configuration: KafkaProducerConfiguration(cluster: invalid),
                logger: Logger(label: "test")
            )
        }
        #expect(invalidError?.description.contains("socket.timeout.ms") == true)
        #expect(invalidError?.debugDescription.contains("-5") == true, "librdkafka's detail helps with ordinary values")

        // librdkafka quotes the value in its detail; for secrets the detail is left out.
        for key in ["sasl.password", "ssl.key.password", "sasl.oauthbearer.client.secret", "sasl.jaas.config"] {
            #expect(RDKafkaConfig.isSecret(key), "\(key)")
        }
        #expect(!RDKafkaConfig.isSecret("socket.timeout.ms"))
    }

    @Test("Security settings must fit the protocol")
    func securityProtocol() {
        var cluster = cluster
        cluster.security = KafkaSecurity(securityProtocol: .plaintext, tls: .init(caLocation: "/etc/ca.pem"))
        let error = #expect(throws: KafkaError.self) {
            _ = try KafkaProducerConfiguration(cluster: cluster).properties()
        }
        #expect(error?.description.contains("ssl") == true)
    }

    @Test("Group timings must nest: heartbeat < session <= max poll interval")
    func groupTimings() {
        var configuration = KafkaConsumerConfiguration(cluster: cluster, groupID: "workers", topics: ["raw"])
        configuration.heartbeatInterval = .seconds(60)
        #expect(throws: KafkaError.self) { _ = try configuration.properties() }
        configuration = KafkaConsumerConfiguration(cluster: cluster, groupID: "workers", topics: [])
        #expect(throws: KafkaError.self) { _ = try configuration.properties() }
    }

    @Test("Durations become whole milliseconds, rounding up so a short wait never becomes 'no wait'")
    func milliseconds() {
        #expect(Duration.microseconds(1).wholeMilliseconds == 1)
        #expect(Duration.milliseconds(250).wholeMilliseconds == 250)
        #expect(Duration.seconds(3).wholeMilliseconds == 3_000)
        #expect(Duration.zero.wholeMilliseconds == 0)
    }

    @Test("Printing a configuration never prints its secrets")
    func descriptionsRedactSecrets() {
        var cluster = cluster
        cluster.security = KafkaSecurity(
            securityProtocol: .saslSSL,
            sasl: .init(mechanism: "SCRAM-SHA-512", username: "pipeline", password: "hunter2"),
            tls: .init(caLocation: "/etc/kafka/ca.pem", keyPassword: "hunter3")
        )
        cluster.additionalProperties = ["sasl.oauthbearer.client.secret": "hunter4", "socket.timeout.ms": "5000"]
        for text in [
            String(describing: cluster), String(reflecting: cluster), "\(KafkaProducerConfiguration(cluster: cluster))",
        ] {
            #expect(!text.contains("hunter"), "\(text)")
            #expect(
                text.contains("pipeline") && text.contains("socket.timeout.ms=5000")
                    && text.contains("/etc/kafka/ca.pem")
            )
        }
    }
}
