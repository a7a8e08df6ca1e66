// Configurations end up in startup logs; these descriptions print every setting but the secrets.

extension KafkaClusterConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    /// The settings, with the values of secret properties (passwords, keys, tokens) replaced by `<redacted>`.
    package var description: String {
        let additional = additionalProperties.sorted { $0.key < $1.key }.map { key, value in
            "\(key)=\(RDKafkaConfig.isSecret(key) ? "<redacted>" : value)"
        }
        return "KafkaClusterConfiguration(bootstrapServers: \(bootstrapServers.joined(separator: ",")), "
            + "clientID: \(clientID), security: \(security), additionalProperties: [\(additional.joined(separator: ", "))])"
    }

    /// The same as ``description``: secrets stay out of debug output too.
    package var debugDescription: String { description }
}

extension KafkaSecurity: CustomStringConvertible, CustomDebugStringConvertible {
    /// The protocol, SASL mechanism and user, and TLS file locations; passwords are replaced by `<redacted>`.
    package var description: String {
        var parts = ["protocol: \(securityProtocol.rawValue)"]
        if let sasl {
            parts.append(
                "sasl: \(sasl.mechanism) user \(sasl.username ?? "-") password \(sasl.password == nil ? "-" : "<redacted>")"
                    + (sasl.oauth.map {
                        " oauth \($0.tokenEndpoint) client \($0.clientID) secret <redacted> scope \($0.scope ?? "-")"
                            + " extensions [\($0.extensions.keys.sorted().joined(separator: ","))]"
                    } ?? "")
            )
        }
        if let tls {
            parts.append(
                "tls: ca \(tls.caLocation ?? "system") certificate \(tls.certificateLocation ?? "-") key "
                    + "\(tls.keyLocation ?? "-") key password \(tls.keyPassword == nil ? "-" : "<redacted>")"
            )
        }
        return "KafkaSecurity(\(parts.joined(separator: ", ")))"
    }

    /// The same as ``description``: secrets stay out of debug output too.
    package var debugDescription: String { description }
}
