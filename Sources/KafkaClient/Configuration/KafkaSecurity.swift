/// Transport security and authentication for a Kafka cluster (`security.protocol`, `sasl.*`, `ssl.*`).
///
/// Secrets (SASL password, TLS key password) are never printed by ``KafkaError``; pass them from the environment or
/// a file, never from a checked-in configuration.
package struct KafkaSecurity: Sendable, Hashable {
    /// `security.protocol`.
    package var securityProtocol: SecurityProtocol
    /// SASL mechanism and credentials, for `sasl_plaintext` and `sasl_ssl`.
    package var sasl: SASL?
    /// TLS settings, for `ssl` and `sasl_ssl`.
    package var tls: TLS?

    /// No encryption, no authentication.
    package static let plaintext = KafkaSecurity(securityProtocol: .plaintext)

    /// Security with the given protocol and settings.
    package init(securityProtocol: SecurityProtocol, sasl: SASL? = nil, tls: TLS? = nil) {
        self.securityProtocol = securityProtocol
        self.sasl = sasl
        self.tls = tls
    }

    /// A `security.protocol` value.
    package struct SecurityProtocol: RawRepresentable, Sendable, Hashable {
        /// The `security.protocol` value.
        package let rawValue: String
        /// A security protocol from a `security.protocol` value.
        package init(rawValue: String) { self.rawValue = rawValue }

        /// `plaintext`: no encryption, no authentication.
        package static let plaintext = SecurityProtocol(rawValue: "plaintext")
        /// `ssl`: TLS encryption, optionally with a client certificate.
        package static let ssl = SecurityProtocol(rawValue: "ssl")
        /// `sasl_plaintext`: SASL authentication without encryption.
        package static let saslPlaintext = SecurityProtocol(rawValue: "sasl_plaintext")
        /// `sasl_ssl`: SASL authentication over TLS.
        package static let saslSSL = SecurityProtocol(rawValue: "sasl_ssl")
    }

    /// SASL authentication (`sasl.mechanism`, `sasl.username`, `sasl.password`), or `OAUTHBEARER` tokens.
    package struct SASL: Sendable, Hashable {
        /// `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512` or `OAUTHBEARER`.
        package var mechanism: String
        /// The user name (`sasl.username`).
        package var username: String?
        /// The password (`sasl.password`); a secret, keep it out of checked-in configuration.
        package var password: String?
        /// With `OAUTHBEARER`: tokens this layer requests by the client-credentials grant.
        package var oauth: KafkaOAuthClientCredentials?

        /// SASL settings with the given mechanism and credentials.
        package init(
            mechanism: String,
            username: String? = nil,
            password: String? = nil,
            oauth: KafkaOAuthClientCredentials? = nil
        ) {
            self.mechanism = mechanism
            self.username = username
            self.password = password
            self.oauth = oauth
        }
    }

    /// TLS trust and client certificate (`ssl.*`), as file paths.
    package struct TLS: Sendable, Hashable {
        /// CA bundle to trust (`ssl.ca.location`); nil uses the system's.
        package var caLocation: String?
        /// Client certificate for mutual TLS (`ssl.certificate.location`).
        package var certificateLocation: String?
        /// Client private key (`ssl.key.location`).
        package var keyLocation: String?
        /// Password of the client private key (`ssl.key.password`).
        package var keyPassword: String?
        /// Verify the broker's host name against its certificate (`ssl.endpoint.identification.algorithm`).
        package var verifyHostname = true

        /// TLS settings from file paths (nil: not set) and the key's password; host name verification stays on.
        package init(
            caLocation: String? = nil,
            certificateLocation: String? = nil,
            keyLocation: String? = nil,
            keyPassword: String? = nil
        ) {
            self.caLocation = caLocation
            self.certificateLocation = certificateLocation
            self.keyLocation = keyLocation
            self.keyPassword = keyPassword
        }
    }

    func properties() throws(KafkaError) -> [String: String] {
        let known: Set<SecurityProtocol> = [.plaintext, .ssl, .saslPlaintext, .saslSSL]
        guard known.contains(securityProtocol) else {
            throw .invalidConfiguration(
                "security.protocol '\(securityProtocol.rawValue)' is not one of plaintext, ssl, sasl_plaintext, sasl_ssl"
            )
        }
        var properties = ["security.protocol": securityProtocol.rawValue]
        let usesSASL = securityProtocol == .saslPlaintext || securityProtocol == .saslSSL
        if usesSASL {
            guard let sasl else {
                throw .invalidConfiguration("security.protocol \(securityProtocol.rawValue) needs SASL settings")
            }
            properties["sasl.mechanism"] = sasl.mechanism
            if let username = sasl.username { properties["sasl.username"] = username }
            if let password = sasl.password { properties["sasl.password"] = password }
            if let oauth = sasl.oauth {
                guard sasl.mechanism == "OAUTHBEARER" else {
                    throw .invalidConfiguration(
                        "OAuth client credentials given but sasl.mechanism is \(sasl.mechanism); use OAUTHBEARER"
                    )
                }
                try oauth.validate()
            }
        } else if sasl != nil {
            throw .invalidConfiguration(
                "SASL settings given but security.protocol is \(securityProtocol.rawValue); use sasl_plaintext or sasl_ssl"
            )
        }
        if let tls {
            guard securityProtocol == .ssl || securityProtocol == .saslSSL else {
                throw .invalidConfiguration(
                    "TLS settings given but security.protocol is \(securityProtocol.rawValue); use ssl or sasl_ssl"
                )
            }
            if let value = tls.caLocation { properties["ssl.ca.location"] = value }
            if let value = tls.certificateLocation { properties["ssl.certificate.location"] = value }
            if let value = tls.keyLocation { properties["ssl.key.location"] = value }
            if let value = tls.keyPassword { properties["ssl.key.password"] = value }
            properties["ssl.endpoint.identification.algorithm"] = tls.verifyHostname ? "https" : "none"
        }
        return properties
    }
}
