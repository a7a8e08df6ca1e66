import Foundation
import Ingress
import KafkaClient
import PipelineContract

extension PipelineSettings {
    /// `kafka.*`: the cluster every component talks to.
    package func kafkaCluster(clientID: String) throws -> KafkaClusterConfiguration {
        guard let servers = try string("kafka.bootstrapServers"), !servers.isEmpty else {
            throw SettingsError(key: "kafka.bootstrapServers", reason: "is required: host:port of one or more brokers")
        }
        var cluster = KafkaClusterConfiguration(bootstrapServers: servers)
        cluster.clientID = try string("kafka.clientId") ?? clientID
        let securityProtocol = try string("kafka.security.protocol") ?? "plaintext"
        let known: [KafkaSecurity.SecurityProtocol] = [.plaintext, .ssl, .saslPlaintext, .saslSSL]
        guard let parsed = known.first(where: { $0.rawValue == securityProtocol }) else {
            throw SettingsError(
                key: "kafka.security.protocol",
                reason: "must be one of \(known.map(\.rawValue).joined(separator: ", ")), not '\(securityProtocol)'"
            )
        }
        var sasl: KafkaSecurity.SASL?
        if let mechanism = try string("kafka.sasl.mechanism") {
            sasl = KafkaSecurity.SASL(
                mechanism: mechanism,
                username: try string("kafka.sasl.username"),
                password: try secret("kafka.sasl.password"),
                oauth: try kafkaOAuth()
            )
        }
        var tls: KafkaSecurity.TLS?
        if parsed == .ssl || parsed == .saslSSL {
            tls = KafkaSecurity.TLS(
                caLocation: try string("kafka.ssl.caLocation"),
                certificateLocation: try string("kafka.ssl.certificateLocation"),
                keyLocation: try string("kafka.ssl.keyLocation"),
                keyPassword: try secret("kafka.ssl.keyPassword")
            )
        }
        cluster.security = KafkaSecurity(securityProtocol: parsed, sasl: sasl, tls: tls)
        cluster.additionalProperties = try kafkaProperties()
        do {
            try cluster.validate()
        } catch {
            throw SettingsError(
                key: "kafka",
                reason: "is invalid: \(error.reason)" + (error.context.map { " (\($0))" } ?? "")
            )
        }
        return cluster
    }

    /// `kafka.sasl.oauthbearer.*`: OAuth client credentials whose tokens the Kafka clients fetch themselves for
    /// `OAUTHBEARER` (nil without a token endpoint).
    private func kafkaOAuth() throws -> KafkaOAuthClientCredentials? {
        let prefix = "kafka.sasl.oauthbearer."
        guard let endpoint = try string(prefix + "tokenEndpointUrl") else { return nil }
        guard let clientID = try string(prefix + "clientId"), let clientSecret = try secret(prefix + "clientSecret")
        else {
            throw SettingsError(
                key: prefix + "tokenEndpointUrl",
                reason: "needs \(prefix)clientId and \(prefix)clientSecret (or clientSecretFile) too"
            )
        }
        var oauth = KafkaOAuthClientCredentials(
            tokenEndpoint: endpoint,
            clientID: clientID,
            clientSecret: clientSecret,
            scope: try string(prefix + "scope")
        )
        oauth.parameters = try nameValues(try stringArray(prefix + "parameters") ?? [], key: prefix + "parameters")
        oauth.extensions = try nameValues(try stringArray(prefix + "extensions") ?? [], key: prefix + "extensions")
        oauth.principalClaim = try string(prefix + "principalClaim") ?? oauth.principalClaim
        oauth.clientAuthentication =
            try string(prefix + "clientAuthMethod")
            .map(KafkaOAuthClientCredentials.ClientAuthentication.init(rawValue:)) ?? oauth.clientAuthentication
        oauth.requestTimeout = try duration(prefix + "requestTimeoutSeconds") ?? oauth.requestTimeout
        return oauth
    }

    /// `kafka.properties` (`name=value` entries; `KAFKA_PROPERTIES` comma-separated) or `kafka.propertiesFile`
    /// (one per line, `#` comments, as a librdkafka properties file; may hold secrets): any further librdkafka
    /// property, such as `client.rack` or `ssl.cipher.suites`.
    private func kafkaProperties() throws -> [String: String] {
        try nameValues(try secrets("kafka.properties").filter { !$0.hasPrefix("#") }, key: "kafka.properties")
    }

    /// `name=value` entries of `key`, each name once; the value may hold `=`.
    func nameValues(_ entries: [String], key: String) throws -> [String: String] {
        var values: [String: String] = [:]
        for entry in entries {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw SettingsError(key: key, reason: "has an entry that is not name=value")
            }
            let name = String(entry[..<equals]).trimmingCharacters(in: .whitespaces)
            guard values[name] == nil else {
                throw SettingsError(key: key, reason: "sets \(name) twice")
            }
            values[name] = String(entry[entry.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    /// `apps.names` and `apps.{name}.*`: the apps served.
    package func apps() throws -> [PipelineApp] {
        guard let names = try stringArray("apps.names"), !names.isEmpty else {
            throw SettingsError(key: "apps.names", reason: "is required: the names of the apps served, e.g. notes")
        }
        return try names.map { name in
            guard PipelineApp.isValidName(name) else {
                throw SettingsError(key: "apps.names", reason: "has '\(name)', not 1-64 of a-z, 0-9, '-', '_'")
            }
            guard let bundleID = try string("apps.\(name).bundleId"), !bundleID.isEmpty else {
                throw SettingsError(key: "apps.\(name).bundleId", reason: "is required: the app's bundle identifier")
            }
            let appAppleID = try int("apps.\(name).appAppleId").map(Int64.init)
            return PipelineApp(
                name: name,
                bundleID: bundleID,
                appAppleID: appAppleID,
                sharedSecrets: try secrets("apps.\(name).sharedSecrets")
            )
        }
    }

    /// `ingress.*` and `kafka.topics.raw`.
    package func ingress(apps: [PipelineApp]) throws -> IngressConfiguration {
        var configuration = IngressConfiguration(apps: apps)
        configuration.host = try string("ingress.host") ?? configuration.host
        configuration.port = try int("ingress.port") ?? configuration.port
        configuration.rawTopic = try string("kafka.topics.raw") ?? configuration.rawTopic
        configuration.maximumBodySize = try int("ingress.maxBodyBytes") ?? configuration.maximumBodySize
        configuration.acknowledgementTimeout =
            try duration("ingress.ackTimeoutSeconds") ?? configuration.acknowledgementTimeout
        configuration.idleTimeout = try duration("ingress.idleTimeoutSeconds") ?? configuration.idleTimeout
        configuration.requestTimeout = try duration("ingress.requestTimeoutSeconds") ?? configuration.requestTimeout
        configuration.readinessTimeout =
            try duration("ingress.readinessTimeoutSeconds") ?? configuration.readinessTimeout
        configuration.maximumConcurrentRequests =
            try int("ingress.maxConcurrentRequests") ?? configuration.maximumConcurrentRequests
        configuration.eventLoopThreads = try int("ingress.eventLoopThreads")
        configuration.allowedSources = try networks("ingress.allowedSources")
        configuration.trustedProxies = try networks("ingress.trustedProxies")
        configuration.pathToken = try secret("ingress.pathToken")
        if let compression = try string("ingress.compression") {
            guard IngressConfiguration.compressionCodecs.contains(compression) else {
                throw SettingsError(
                    key: "ingress.compression",
                    reason: "is '\(compression)', not one of "
                        + IngressConfiguration.compressionCodecs.joined(separator: ", ")
                )
            }
            configuration.rawTopicCompression = compression
        }
        if let level = try int("ingress.compressionLevel") {
            guard KafkaProducerConfiguration.compressionLevels.contains(level) else {
                throw SettingsError(key: "ingress.compressionLevel", reason: "is \(level), not 0-12")
            }
            configuration.rawTopicCompressionLevel = level
        }
        do {
            try configuration.validate()
        } catch {
            throw SettingsError(key: "ingress", reason: "is invalid: \(error.reason)")
        }
        return configuration
    }

    private func networks(_ key: String) throws -> [IPNetwork] {
        try (stringArray(key) ?? []).map { text in
            guard let network = IPNetwork(text) else {
                throw SettingsError(key: key, reason: "has '\(text)', which is not an address or CIDR range")
            }
            return network
        }
    }
}
