import CRDKafka

/// Builds librdkafka configuration objects (`rd_kafka_conf_t`).
enum RDKafkaConfig {
    /// A new configuration with every property set; the caller owns it and hands it to `rd_kafka_new`, which takes
    /// it only on success. Unknown properties and invalid values fail here, naming the property.
    static func make(_ properties: [String: String]) throws(KafkaError) -> OpaquePointer {
        let conf = rd_kafka_conf_new()!
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let (result, detail) = RDKafkaErrorText.with { rd_kafka_conf_set(conf, key, value, $0, $1) }
            guard result == RD_KAFKA_CONF_OK else {
                rd_kafka_conf_destroy(conf)
                // librdkafka's text quotes the value; keep it out when the value may be a secret.
                throw .invalidConfiguration(
                    result == RD_KAFKA_CONF_UNKNOWN
                        ? "unknown librdkafka property '\(key)'"
                        : "invalid value for librdkafka property '\(key)'",
                    context: isSecret(key) ? nil : detail
                )
            }
        }
        return conf
    }

    /// Whether a property's value must never appear in errors or logs.
    static func isSecret(_ key: String) -> Bool {
        // sasl.oauthbearer.config may hold a client secret.
        ["password", "secret", "key", "token", "jaas", "oauthbearer.config"].contains { key.contains($0) }
    }
}
