import AppStoreTestSupport
import Foundation
import KafkaClient
import PipelineServices
import Testing

@testable import asnp

/// Kafka settings as a platform team writes them for a managed cluster: the examples in Config/kafka/ must give
/// librdkafka exactly the properties Docs/kafka.md says, and anything else librdkafka takes is reachable.
@Suite(
    "Kafka settings: every managed service's example, kafka.properties, OAUTHBEARER client credentials, refusals",
    .tags(.fast)
)
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
                // The tokens come from the Kafka layer's own requests (OAuthBearerTests), not from librdkafka.
                "confluent-cloud-oauth",
                [
                    "security.protocol": "sasl_ssl", "sasl.mechanism": "OAUTHBEARER",
                    "ssl.endpoint.identification.algorithm": "https",
                ]
            ),
            (
                "strimzi-oauth",
                [
                    "security.protocol": "sasl_ssl", "sasl.mechanism": "OAUTHBEARER",
                    "ssl.ca.location": "/etc/strimzi-cluster-ca/ca.crt",
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
        // The secrets the example's service uses: an OAuth client's, or a SASL password.
        let environment =
            expected["sasl.mechanism"] == "OAUTHBEARER"
            ? Self.secrets.filter { $0.key.hasPrefix("KAFKA_SASL_OAUTHBEARER_") } : Self.secrets
        let settings = try await PipelineSettings.load(file: Self.example(name), environment: environment)
        let cluster = try settings.kafkaCluster(clientID: "asnp-test")
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

    @Test(
        """
        OAUTHBEARER client credentials: the examples' and the environment's settings reach the Kafka layer, the secret \
        from a file and never printed; incomplete, malformed or with another mechanism, refused
        """
    )
    func oauthBearerClientCredentials() async throws {
        let confluent = try await PipelineSettings.load(
            file: Self.example("confluent-cloud-oauth"),
            environment: Self.secrets
        )
        .kafkaCluster(clientID: "asnp-test")
        let oauth = try #require(confluent.security.sasl?.oauth)
        #expect(oauth.tokenEndpoint.hasPrefix("https://login.microsoftonline.com/"))
        #expect(oauth.clientID == "asnp-workers")
        #expect(oauth.clientSecret == "s3cret-client")
        #expect(oauth.scope == "api://confluent/.default")
        #expect(oauth.extensions == ["logicalCluster": "lkc-abc123", "identityPoolId": "pool-xyz"])
        #expect(oauth.clientAuthentication == .basic)
        #expect(!"\(confluent)".contains("s3cret"), "\(confluent)")
        #expect("\(confluent)".contains("client asnp-workers secret <redacted>"), "\(confluent)")
        let strimzi = try await PipelineSettings.load(file: Self.example("strimzi-oauth"), environment: Self.secrets)
            .kafkaCluster(clientID: "asnp-test")
        #expect(strimzi.security.sasl?.oauth?.principalClaim == "preferred_username")

        let secretFile = FileManager.default.temporaryDirectory.appendingPathComponent("oauth-\(UUID())")
        defer { try? FileManager.default.removeItem(at: secretFile) }
        try Data("from-a-file\n".utf8).write(to: secretFile)
        let environment = [
            "KAFKA_BOOTSTRAP_SERVERS": "broker.example.com:9092",
            "KAFKA_SECURITY_PROTOCOL": "sasl_ssl",
            "KAFKA_SASL_MECHANISM": "OAUTHBEARER",
            "KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL": "https://idp.example.com/token",
            "KAFKA_SASL_OAUTHBEARER_CLIENT_ID": "asnp",
            "KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE": secretFile.path,
            "KAFKA_SASL_OAUTHBEARER_PARAMETERS": "audience=https://kafka.example.com,resource=urn:kafka",
            "KAFKA_SASL_OAUTHBEARER_EXTENSIONS": "logicalCluster=lkc-1",
            "KAFKA_SASL_OAUTHBEARER_CLIENT_AUTH_METHOD": "client_secret_post",
            "KAFKA_SASL_OAUTHBEARER_REQUEST_TIMEOUT_SECONDS": "2.5",
        ]
        let fromEnvironment = try #require(try await Self.cluster(environment).security.sasl?.oauth)
        #expect(fromEnvironment.clientSecret == "from-a-file")
        #expect(fromEnvironment.parameters == ["audience": "https://kafka.example.com", "resource": "urn:kafka"])
        #expect(fromEnvironment.extensions == ["logicalCluster": "lkc-1"])
        #expect(fromEnvironment.clientAuthentication == .post)
        #expect(fromEnvironment.requestTimeout == .milliseconds(2_500))

        for (change, says) in [
            (["KAFKA_SASL_OAUTHBEARER_CLIENT_ID": nil], "needs kafka.sasl.oauthbearer.clientId"),
            (["KAFKA_SASL_MECHANISM": "SCRAM-SHA-512"], "use OAUTHBEARER"),
            (["KAFKA_SASL_OAUTHBEARER_EXTENSIONS": "logical-cluster=lkc-1"], "not a name of letters"),
            (["KAFKA_SASL_OAUTHBEARER_PARAMETERS": "scope=all"], "set by the grant itself"),
            (["KAFKA_SASL_OAUTHBEARER_CLIENT_AUTH_METHOD": "private_key_jwt"], "not client_secret_basic"),
            (["KAFKA_PROPERTIES": "sasl.oauthbearer.method=oidc"], "cannot be set with OAuth client credentials"),
        ] as [([String: String?], String)] {
            var changed = environment
            for (key, value) in change { changed[key] = value }
            let error = await #expect(throws: SettingsError.self, "\(change)") { try await Self.cluster(changed) }
            #expect(error.map { "\($0)" }?.contains(says) == true, "\(change): \(String(describing: error))")
            #expect(error.map { "\($0)" }?.contains("from-a-file") == false)
        }
    }
}
