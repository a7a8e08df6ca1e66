import AppStoreTestSupport
import Foundation
import KafkaClient
import PipelineServices
import Testing

@testable import asnp

/// Kafka settings as a platform team writes them for a managed cluster: the examples in Config/kafka/ must give
/// librdkafka exactly the properties Docs/kafka.md says, and anything else librdkafka takes is reachable.
@Suite("Kafka settings: every managed service's example, kafka.properties, OAUTHBEARER OIDC, refusals")
struct KafkaSettingsTests {
    /// Secrets as the environment (or a mounted file) would give them.
    static let secrets = [
        "KAFKA_SASL_PASSWORD": "s3cret-password",
        "KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET": "s3cret-client",
    ]

    static func cluster(file: String? = nil, _ environment: [String: String]) async throws -> KafkaClusterConfiguration
    {
        let settings = try await PipelineSettings.load(file: file, environment: environment)
        return try settings.kafkaCluster(clientID: "asnp-test")
    }

    static func example(_ name: String) -> String {
        Fixtures.packageRoot.appendingPathComponent("Config/kafka/\(name).json").path
    }

    @Test(
        "each example in Config/kafka gives librdkafka the properties documented for its service",
        arguments: [
            (
                "msk-scram",
                [
                    "security.protocol": "sasl_ssl", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "asnp",
                    "sasl.password": "s3cret-password", "client.rack": "euw1-az1",
                    "ssl.endpoint.identification.algorithm": "https",
                ]
            ),
            (
                "msk-mtls",
                [
                    "security.protocol": "ssl", "ssl.certificate.location": "/etc/kafka-client/tls.crt",
                    "ssl.key.location": "/etc/kafka-client/tls.key", "ssl.endpoint.identification.algorithm": "https",
                ]
            ),
            (
                "confluent-cloud",
                [
                    "security.protocol": "sasl_ssl", "sasl.mechanism": "PLAIN", "sasl.username": "API_KEY_ID",
                    "sasl.password": "s3cret-password", "socket.keepalive.enable": "true",
                    "ssl.endpoint.identification.algorithm": "https",
                ]
            ),
            (
                "confluent-cloud-oauth",
                [
                    "security.protocol": "sasl_ssl", "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.method": "oidc",
                    "sasl.oauthbearer.token.endpoint.url": "https://login.example.com/oauth2/v2.0/token",
                    "sasl.oauthbearer.client.id": "asnp-workers", "sasl.oauthbearer.client.secret": "s3cret-client",
                    "sasl.oauthbearer.scope": "api://confluent/.default",
                    "sasl.oauthbearer.extensions": "logicalCluster=lkc-abc123,identityPoolId=pool-xyz",
                    "ssl.endpoint.identification.algorithm": "https",
                ]
            ),
            (
                "aiven",
                [
                    "security.protocol": "sasl_ssl", "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "avnadmin",
                    "sasl.password": "s3cret-password", "ssl.ca.location": "/etc/kafka-ca/ca.pem",
                    "ssl.endpoint.identification.algorithm": "https",
                ]
            ),
            (
                "strimzi",
                [
                    "security.protocol": "ssl", "ssl.ca.location": "/etc/strimzi-cluster-ca/ca.crt",
                    "ssl.certificate.location": "/etc/strimzi-user/user.crt",
                    "ssl.key.location": "/etc/strimzi-user/user.key", "ssl.endpoint.identification.algorithm": "https",
                ]
            ),
            (
                "redpanda",
                [
                    "security.protocol": "sasl_ssl", "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "asnp",
                    "sasl.password": "s3cret-password", "ssl.endpoint.identification.algorithm": "https",
                ]
            ),
        ]
    )
    func managedServiceExamples(name: String, expected: [String: String]) async throws {
        let settings = try await PipelineSettings.load(file: Self.example(name), environment: Self.secrets)
        let cluster: KafkaClusterConfiguration
        do {
            cluster = try settings.kafkaCluster(clientID: "asnp-test")
        } catch  where expected["sasl.oauthbearer.method"] == "oidc" && !Self.librdkafkaHasOIDC {
            // Debian's librdkafka 2.0.2 is built without libcurl: the settings say so instead of failing later.
            #expect("\(error)".contains("not supported in this build"), "\(error)")
            return
        }
        var properties = try cluster.librdkafkaProperties
        #expect(properties.removeValue(forKey: "client.id") == "asnp-test")
        #expect(properties.removeValue(forKey: "bootstrap.servers")?.isEmpty == false)
        #expect(properties == expected)
        // Printed (startup logs, errors) without any secret.
        #expect(!"\(cluster)".contains("s3cret"), "\(cluster)")
    }

    @Test(
        "kafka.properties from the environment or a properties file reaches librdkafka; typos and managed ones do not"
    )
    func additionalProperties() async throws {
        let base = ["KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092"]
        var environment = base
        environment["KAFKA_PROPERTIES"] = "client.rack=use1-az1, socket.keepalive.enable=true"
        let cluster = try await Self.cluster(environment)
        #expect(cluster.additionalProperties == ["client.rack": "use1-az1", "socket.keepalive.enable": "true"])

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("kafka-\(UUID()).properties")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("# from a mounted secret\nssl.cipher.suites=ECDHE-RSA-AES256-GCM-SHA384\nsasl.password=p=q\n".utf8)
            .write(to: file)
        environment = base
        environment["KAFKA_PROPERTIES_FILE"] = file.path
        let fromFile = try await Self.cluster(environment)
        #expect(
            fromFile.additionalProperties == [
                "ssl.cipher.suites": "ECDHE-RSA-AES256-GCM-SHA384", "sasl.password": "p=q",
            ]
        )
        #expect(!"\(fromFile)".contains("p=q"), "a secret property is redacted: \(fromFile)")

        for (entry, says) in [
            ("enable.auto.commit=true", "enable.auto.commit is set by the pipeline itself"),
            ("enable.idempotence=false", "enable.idempotence is set by the pipeline itself"),
            ("client.rak=use1-az1", "unknown librdkafka property 'client.rak'"),
            ("socket.keepalive.enable=perhaps", "invalid value for librdkafka property 'socket.keepalive.enable'"),
            (
                "sasl.oauthbearer.method=s3cret-method",
                "invalid value for librdkafka property 'sasl.oauthbearer.method'"
            ),
            ("=value", "not name=value"),
        ] {
            environment = base
            environment["KAFKA_PROPERTIES"] = entry
            let error = await #expect(throws: SettingsError.self, "\(entry)") { try await Self.cluster(environment) }
            #expect(error.map { "\($0)" }?.contains(says) == true, "\(entry): \(String(describing: error))")
            #expect(
                error.map { "\($0)" }?.contains("s3cret") == false,
                "no secret value in \(String(describing: error))"
            )
        }
    }

    /// Whether the librdkafka linked here can fetch OIDC tokens (built with libcurl; Debian's 2.0.2 is not).
    static var librdkafkaHasOIDC: Bool {
        var cluster = KafkaClusterConfiguration(bootstrapServers: "127.0.0.1:9092")
        cluster.additionalProperties = ["sasl.oauthbearer.method": "oidc"]
        return (try? cluster.validate()) != nil
    }

    @Test(
        """
        OAUTHBEARER with OIDC client credentials: the properties librdkafka takes, or, where it was built without \
        OIDC, an error that says so; incomplete or with another mechanism, refused
        """
    )
    func oauthBearerOIDC() async throws {
        var environment = Self.secrets
        environment["KAFKA_BOOTSTRAP_SERVERS"] = "broker.example.com:9092"
        environment["KAFKA_SECURITY_PROTOCOL"] = "sasl_ssl"
        environment["KAFKA_SASL_MECHANISM"] = "OAUTHBEARER"
        environment["KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL"] = "https://idp.example.com/token"
        environment["KAFKA_SASL_OAUTHBEARER_CLIENT_ID"] = "asnp"
        if Self.librdkafkaHasOIDC {
            let cluster = try await Self.cluster(environment)
            try cluster.validate()
            #expect(try cluster.librdkafkaProperties["sasl.oauthbearer.method"] == "oidc")
            #expect("\(cluster)".contains("oidc https://idp.example.com/token client asnp secret <redacted>"))
        } else {
            let error = await #expect(throws: SettingsError.self) { try await Self.cluster(environment) }
            #expect(
                error.map { "\($0)" }?.contains("OAuth/OIDC depends on libcurl") == true,
                "\(String(describing: error))"
            )
            #expect(error.map { "\($0)" }?.contains("s3cret") == false)
        }
        let oidc = KafkaSecurity.OIDC(
            tokenEndpointURL: "https://idp.example.com/token",
            clientID: "asnp",
            clientSecret: "x"
        )
        var described = KafkaClusterConfiguration(bootstrapServers: "broker.example.com:9092")
        described.security = KafkaSecurity(
            securityProtocol: .saslSSL,
            sasl: KafkaSecurity.SASL(mechanism: "OAUTHBEARER", oidc: oidc)
        )
        #expect("\(described)".contains("oidc https://idp.example.com/token client asnp secret <redacted>"))
        #expect(try described.librdkafkaProperties["sasl.oauthbearer.client.secret"] == "x")

        var incomplete = environment
        incomplete["KAFKA_SASL_OAUTHBEARER_CLIENT_ID"] = nil
        await #expect(throws: SettingsError.self) { try await Self.cluster(incomplete) }
        var scram = environment
        scram["KAFKA_SASL_MECHANISM"] = "SCRAM-SHA-512"
        let error = await #expect(throws: SettingsError.self) { try await Self.cluster(scram) }
        #expect(error.map { "\($0)" }?.contains("use OAUTHBEARER") == true)
    }
}
