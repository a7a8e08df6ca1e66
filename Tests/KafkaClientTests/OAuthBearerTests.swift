import AppStoreTestSupport
import Foundation
import Logging
import Testing

@testable import KafkaClient

/// OAUTHBEARER without libcurl: tokens requested from a token endpoint stand-in on 127.0.0.1 by the client-credentials
/// grant and handed to librdkafka, which asks for each refresh and holds broker connections until it has a token.
///
/// librdkafka 2.0.2's mock cluster does no SASL: it lists no SaslHandshake in its ApiVersions answer, and librdkafka
/// then drops the connection ("SASL Handshake not supported by broker (required by mechanism OAUTHBEARER)"). What the
/// tests observe of librdkafka is that it takes each token (`rd_kafka_oauthbearer_set_token` answers no error), that it
/// connects to a broker (its ApiVersions request, counted by a mark injected into the broker) only once it has one,
/// that it reports a failed request as an `_AUTHENTICATION` error, and that it asks again before each token expires.
@Suite(
    "OAUTHBEARER: client-credentials tokens handed to librdkafka, refreshed before expiry, failures reported",
    .tags(.pipeline)
)
struct OAuthBearerTests {
    /// Long enough that librdkafka's ask at 80% of it, on its 1 s timer, leaves seconds before expiry on a loaded
    /// machine; short enough for a test.
    static let tokenLifetime: Duration = .seconds(20)
    static let clientSecret = "s3cret-client+/="

    enum ClientKind: String, CaseIterable, CustomTestStringConvertible {
        case producer, consumer, admin
        var testDescription: String { rawValue }
    }

    static func cluster(_ mock: KafkaMockCluster, tokenEndpoint: String) -> KafkaClusterConfiguration {
        var oauth = KafkaOAuthClientCredentials(
            tokenEndpoint: tokenEndpoint,
            clientID: "asnp workers",
            clientSecret: clientSecret,
            scope: "kafka:write kafka:read"
        )
        oauth.parameters = ["audience": "https://kafka.example.com"]
        oauth.extensions = ["logicalCluster": "lkc-abc123", "identityPoolId": "pool-xyz"]
        var cluster = mock.clusterConfiguration
        cluster.security = KafkaSecurity(
            securityProtocol: .saslPlaintext,
            sasl: KafkaSecurity.SASL(mechanism: "OAUTHBEARER", oauth: oauth)
        )
        return cluster
    }

    /// Runs `body` while a client of `kind` exists; a producer's service runs meanwhile, serving librdkafka's queue
    /// of errors as the ingress's does.
    static func withClient<Result: Sendable>(
        _ kind: ClientKind,
        cluster: KafkaClusterConfiguration,
        logger: Logger,
        _ body: () async throws -> Result
    ) async throws -> Result {
        switch kind {
        case .producer:
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(cluster: cluster),
                logger: logger
            )
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await producer.run() }
                defer { group.cancelAll() }
                return try await body()
            }
        case .consumer:
            let consumer = try KafkaConsumer(
                configuration: KafkaConsumerConfiguration(cluster: cluster, groupID: "oauth", topics: ["oauth"]),
                logger: logger
            )
            defer { withExtendedLifetime(consumer) {} }
            return try await body()
        case .admin:
            let admin = try KafkaAdminClient(cluster: cluster, logger: logger)
            defer { withExtendedLifetime(admin) {} }
            return try await body()
        }
    }

    @Test("librdkafka asks for a new token before each one expires, and takes it with the SASL extensions")
    func refreshedBeforeExpiry() async throws {
        let lines = LogLines()
        let logger = Logger(label: "test.oauth") { _ in lines.handler(level: .info) }
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        let endpoint = TokenEndpointStandIn(lifetime: Self.tokenLifetime)
        try await endpoint.serve { url in
            let cluster = Self.cluster(mock, tokenEndpoint: url)
            try await Self.withClient(.admin, cluster: cluster, logger: logger) {
                // Two refreshes after the first token: a token's lifetime each, and then some for a loaded run.
                let limit = Self.tokenLifetime * 3 + cluster.oauth!.requestTimeout
                #expect(await eventually(timeout: limit) { endpoint.issued.count >= 3 }, "\(lines.all)")
                let issued = endpoint.issued
                let requests = endpoint.requests
                for index in 1..<min(issued.count, requests.count) {
                    #expect(
                        requests[index].arrivedAt < issued[index - 1].expiresAt,
                        "token \(index) was asked for before token \(index - 1) expired"
                    )
                }
                // librdkafka took each token (rd_kafka_oauthbearer_set_token answered no error).
                #expect(
                    await eventually(timeout: limit) {
                        lines.count { $0.hasPrefix("Kafka OAUTHBEARER token refreshed") } >= 3
                    },
                    "\(lines.all)"
                )
                #expect(
                    lines.all.contains {
                        $0.hasPrefix("Kafka OAUTHBEARER token refreshed") && $0.contains(endpoint.subject)
                    },
                    "the principal is the token's sub claim: \(lines.all)"
                )

                // The grant as RFC 6749 §4.4 and §2.3.1 have it.
                let first = try #require(requests.first)
                #expect(first.form["grant_type"] == "client_credentials")
                #expect(first.form["scope"] == "kafka:write kafka:read")
                #expect(first.form["audience"] == "https://kafka.example.com")
                #expect(first.form["client_secret"] == nil, "the secret goes in the Authorization header by default")
                let basic = try #require(first.authorization?.split(separator: " ").last)
                let pair = String(decoding: try #require(Data(base64Encoded: String(basic))), as: UTF8.self)
                #expect(pair == "asnp%20workers:s3cret-client%2B%2F%3D")

                // Neither the secret nor a token is ever logged.
                let logged = lines.all.joined(separator: "\n")
                #expect(!logged.contains(Self.clientSecret))
                #expect(issued.allSatisfy { !logged.contains($0.token) })
            }
        }
    }

    @Test(
        """
        A failing token endpoint is reported through librdkafka and no broker connection is tried; once it answers \
        again, librdkafka's next ask gets a token and the client connects
        """,
        arguments: ClientKind.allCases
    )
    func failingEndpointRecovers(kind: ClientKind) async throws {
        let lines = LogLines()
        let logger = Logger(label: "test.oauth.\(kind)") { _ in lines.handler(level: .info) }
        let mock = try KafkaMockCluster(brokers: 1, logger: logger)
        // Marks on the broker's first requests of each connection: they stay while nothing connects.
        let marks = 50
        try mock.injectErrors(
            Array(repeating: KafkaMockCluster.BrokerError.none, count: marks),
            into: .apiVersions,
            broker: 1
        )
        let endpoint = TokenEndpointStandIn(lifetime: .seconds(3_600), failing: true)
        try await endpoint.serve { url in
            let cluster = Self.cluster(mock, tokenEndpoint: url)
            try await Self.withClient(kind, cluster: cluster, logger: logger) {
                let limit = RDKafkaOAuthBearer.retryInterval * 2 + cluster.oauth!.requestTimeout * 2 + .seconds(30)

                let failed = "Kafka OAUTHBEARER token request failed"
                #expect(
                    await eventually(timeout: limit) { lines.all.contains { $0.hasPrefix(failed) } },
                    "\(lines.all)"
                )
                if kind == .producer {
                    // librdkafka's own report of the reason set_token_failure gave it, through its error callback:
                    // served by the producer's poll loop (a consumer's polls log it as a consumer error, an admin
                    // client's calls).
                    let reported =
                        "Failed to acquire SASL OAUTHBEARER token: UNAVAILABLE: the token endpoint \(url) "
                        + "answered HTTP 500"
                    #expect(
                        await eventually(timeout: limit) { lines.all.contains { $0.contains(reported) } },
                        "\(lines.all)"
                    )
                }
                let unused = try mock.injectedErrorsLeft(for: .apiVersions, broker: 1)
                #expect(unused == marks, "no connection without a token")

                endpoint.setFailing(false)
                #expect(await eventually(timeout: limit) { !endpoint.issued.isEmpty }, "librdkafka asked again")
                #expect(
                    await eventually(timeout: limit) {
                        (try? mock.injectedErrorsLeft(for: .apiVersions, broker: 1)).map { $0 < marks } ?? false
                    },
                    "the client connected once it had a token"
                )
                #expect(lines.all.contains { $0.hasPrefix("Kafka OAUTHBEARER token refreshed") })
                #expect(endpoint.requests.count >= 2)
            }
        }
    }
}

@Suite("OAUTHBEARER: token responses, settings and the refresh state", .tags(.pipeline))
struct OAuthTokenTests {
    static func jwt(_ claims: String) -> String {
        let encode = { (text: String) in
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        return "\(encode(#"{"alg":"none"}"#)).\(encode(claims)).c2ln"
    }

    static func token(_ json: String, claim: String = "sub") throws(OAuthTokenError) -> OAuthToken {
        try OAuthToken(
            response: Data(json.utf8),
            receivedAt: Date(timeIntervalSince1970: 1_000),
            principalClaim: claim,
            clientID: "client"
        )
    }

    @Test("The lifetime is expires_in (a number or a string of digits), else the JWT's exp; the principal its claim")
    func lifetimeAndPrincipal() throws {
        let jwt = Self.jwt(#"{"sub":"svc","azp":"app","exp":5000}"#)
        #expect(
            try Self.token(#"{"access_token":"\#(jwt)","token_type":"Bearer","expires_in":60}"#).expiresAtMilliseconds
                == 1_060_000
        )
        #expect(
            try Self.token(#"{"access_token":"\#(jwt)","token_type":"bearer","expires_in":"60"}"#).expiresAtMilliseconds
                == 1_060_000
        )
        let fromClaim = try Self.token(#"{"access_token":"\#(jwt)","token_type":"Bearer"}"#)
        #expect(fromClaim.expiresAtMilliseconds == 5_000_000)
        #expect(fromClaim.principal == "svc")
        #expect(try Self.token(#"{"access_token":"\#(jwt)","expires_in":60}"#, claim: "azp").principal == "app")
        #expect(try Self.token(#"{"access_token":"opaque","expires_in":60}"#).principal == "client")
    }

    @Test(
        "Answers librdkafka could not use are refused, naming why",
        arguments: [
            (#"{"token_type":"Bearer","expires_in":60}"#, "no access_token"),
            (#"{"access_token":"x","token_type":"mac","expires_in":60}"#, "not a bearer token"),
            (#"{"access_token":"opaque"}"#, "lifetime is unknown"),
            (#"{"access_token":"x","expires_in":0}"#, "expires_in is 0"),
            ("<html>", "not a JSON object"),
        ]
    )
    func invalidAnswers(json: String, says: String) {
        let error = #expect(throws: OAuthTokenError.self) { try Self.token(json) }
        #expect(error?.code == .invalidResponse)
        #expect(error?.description.contains(says) == true, "\(String(describing: error))")
    }

    @Test("Credentials librdkafka or the grant would refuse later are refused with the configuration")
    func invalidCredentials() {
        let valid = KafkaOAuthClientCredentials(
            tokenEndpoint: "https://idp.example.com/token",
            clientID: "c",
            clientSecret: "s"
        )
        var cases: [(KafkaOAuthClientCredentials, String)] = []
        var credentials = valid
        credentials.tokenEndpoint = "idp.example.com/token"
        cases.append((credentials, "not an http(s) URL"))
        credentials = valid
        credentials.extensions = ["logical-cluster": "lkc"]
        cases.append((credentials, "not a name of letters"))
        credentials = valid
        credentials.extensions = ["auth": "x"]
        cases.append((credentials, "not a name of letters"))
        credentials = valid
        credentials.parameters = ["grant_type": "password"]
        cases.append((credentials, "set by the grant itself"))
        credentials = valid
        credentials.clientAuthentication = .init(rawValue: "private_key_jwt")
        cases.append((credentials, "not client_secret_basic or client_secret_post"))
        for (credentials, says) in cases {
            var cluster = KafkaClusterConfiguration(bootstrapServers: "broker:9092")
            cluster.security = KafkaSecurity(
                securityProtocol: .saslSSL,
                sasl: KafkaSecurity.SASL(mechanism: "OAUTHBEARER", oauth: credentials)
            )
            let error = #expect(throws: KafkaError.self) { try cluster.validate() }
            #expect(error?.description.contains(says) == true, "\(String(describing: error))")
        }
        var competing = KafkaClusterConfiguration(bootstrapServers: "broker:9092")
        competing.security = KafkaSecurity(
            securityProtocol: .saslSSL,
            sasl: KafkaSecurity.SASL(mechanism: "OAUTHBEARER", oauth: valid)
        )
        competing.additionalProperties = ["sasl.oauthbearer.method": "oidc"]
        let error = #expect(throws: KafkaError.self) { try competing.validate() }
        #expect(error?.description.contains("sasl.oauthbearer.method cannot be set") == true)
    }

    @Test("One request at a time; nothing reaches a detached handle, and a running request is cancelled")
    func refreshStateMachine() {
        var machine = RDKafkaOAuthBearer.StateMachine<Int>()
        let first = machine.refreshRequested()
        #expect(first)
        machine.started(1)
        let second = machine.refreshRequested()
        #expect(!second, "librdkafka's second ask waits for the running request")
        let finished = machine.finished()
        #expect(finished)
        let third = machine.refreshRequested()
        #expect(third)
        machine.started(2)
        let cancelled = machine.detach()
        #expect(cancelled == 2)
        let late = machine.finished()
        #expect(!late, "a request ending after detach hands nothing over")
        let afterDetach = machine.refreshRequested()
        #expect(!afterDetach)
        let again = machine.detach()
        #expect(again == nil)
    }
}
