import CRDKafka

/// How to reach and authenticate to a Kafka cluster; shared by producers, consumers and the admin client.
package struct KafkaClusterConfiguration: Sendable, Hashable {
    /// `host:port` of one or more brokers to bootstrap from (`bootstrap.servers`).
    package var bootstrapServers: [String]
    /// Identifies this process in broker logs and quotas (`client.id`).
    package var clientID: String = "asnp"
    /// Transport security and authentication. Default: plaintext (the mock cluster, a local broker).
    package var security: KafkaSecurity = .plaintext
    /// Any further librdkafka property, passed through as is (for example `socket.keepalive.enable=true`).
    /// Properties this layer manages itself for correctness (offset handling, idempotence) are refused with an
    /// ``KafkaError/Code/invalidConfiguration`` error naming them.
    package var additionalProperties: [String: String] = [:]

    /// A configuration for the given brokers.
    package init(bootstrapServers: [String]) {
        self.bootstrapServers = bootstrapServers
    }

    /// A configuration from a comma-separated `bootstrap.servers` string.
    package init(bootstrapServers: String) {
        self.init(bootstrapServers: bootstrapServers.split(separator: ",").map { $0.trimmingSpaces })
    }

    /// Properties some client of this layer sets itself for its guarantees (offsets, idempotence, delivery
    /// reports): never taken from ``additionalProperties``.
    package static var managedProperties: Set<String> {
        KafkaConsumerConfiguration.managedProperties.union(KafkaProducerConfiguration.managedProperties)
            .union(KafkaPartitionReader.managedProperties).union(["bootstrap.servers"])
    }

    /// Checks the configuration as every client would take it: no managed property in ``additionalProperties``,
    /// and librdkafka accepts every property and value (`rd_kafka_conf_set`); the error names the property and
    /// never shows a secret value. Nothing connects.
    package func validate() throws(KafkaError) {
        let conf = try RDKafkaConfig.make(try librdkafkaProperties)
        rd_kafka_conf_destroy(conf)
    }

    /// The librdkafka properties this configuration gives every client (each kind adds its own managed ones).
    package var librdkafkaProperties: [String: String] {
        get throws(KafkaError) { try properties(managed: Self.managedProperties) }
    }

    /// The librdkafka properties, checked; `managed` names properties callers may not override.
    func properties(managed: Set<String>) throws(KafkaError) -> [String: String] {
        guard !bootstrapServers.isEmpty else {
            throw .invalidConfiguration("bootstrap.servers is empty: name at least one broker as host:port")
        }
        for server in bootstrapServers {
            guard let colon = server.lastIndex(of: ":"), colon != server.startIndex,
                let port = Int(server[server.index(after: colon)...]), (1...65_535).contains(port)
            else {
                throw .invalidConfiguration("bootstrap server '\(server)' is not host:port")
            }
        }
        guard !clientID.isEmpty else { throw .invalidConfiguration("client.id is empty") }
        var properties = [
            "bootstrap.servers": bootstrapServers.joined(separator: ","),
            "client.id": clientID,
        ]
        properties.merge(try security.properties(), uniquingKeysWith: { _, new in new })
        for (key, value) in additionalProperties {
            if managed.contains(key) || key == "bootstrap.servers" {
                throw .invalidConfiguration(
                    "\(key) is set by the pipeline itself for its guarantees and cannot be set as an additional property"
                )
            }
            properties[key] = value
        }
        if security.sasl?.oauth != nil,
            let conflicting = additionalProperties.keys.sorted().first(where: Self.isOAuthBearerProperty)
        {
            // Tokens come from this layer's own refresh callback; librdkafka's own ways of getting one would compete.
            throw .invalidConfiguration(
                "\(conflicting) cannot be set with OAuth client credentials, which fetch the OAUTHBEARER tokens"
            )
        }
        return properties
    }

    /// The client credentials whose tokens every client of this configuration hands to librdkafka, if any.
    var oauth: KafkaOAuthClientCredentials? { security.sasl?.oauth }

    private static func isOAuthBearerProperty(_ key: String) -> Bool {
        key.hasPrefix("sasl.oauthbearer.") || key == "enable.sasl.oauthbearer.unsecure.jwt"
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
