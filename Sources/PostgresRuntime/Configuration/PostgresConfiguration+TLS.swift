import NIOSSL
import PostgresNIO

extension PostgresConfiguration {
    /// The CA certificates to trust instead of the system's (libpq's `sslrootcert`), read when set: a PEM bundle.
    package struct RootCertificates: Sendable {
        /// The PEM file they were read from.
        package let path: String
        let certificates: [NIOSSLCertificate]

        /// Reads every certificate of the PEM file at `path`.
        /// - Throws: ``PostgresConfigurationError/Code/invalidConfiguration`` naming the file when it cannot be read or
        ///   holds no certificate.
        package init(path: String) throws(PostgresConfigurationError) {
            certificates = try PostgresConfiguration.certificates(path, parameter: "sslrootcert")
            self.path = path
        }
    }

    /// A client certificate and its key (libpq's `sslcert` and `sslkey`), read when set: PEM files.
    package struct ClientCertificate: Sendable {
        package let certificatePath: String
        package let keyPath: String
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey

        /// Reads the certificate chain at `certificatePath` and the unencrypted private key at `keyPath`.
        /// - Throws: ``PostgresConfigurationError/Code/invalidConfiguration`` naming the file that cannot be read.
        package init(certificatePath: String, keyPath: String) throws(PostgresConfigurationError) {
            chain = try PostgresConfiguration.certificates(certificatePath, parameter: "sslcert")
            do {
                key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
            } catch {
                throw PostgresConfigurationError(
                    code: .invalidConfiguration,
                    reason: "sslkey \(keyPath) cannot be read as an unencrypted PEM private key",
                    context: String(describing: error)
                )
            }
            self.certificatePath = certificatePath
            self.keyPath = keyPath
        }
    }

    /// Every certificate of the PEM file at `path`, the libpq `parameter` that names it.
    /// - Throws: ``PostgresConfigurationError/Code/invalidConfiguration`` naming the file when it cannot be read or
    ///   holds no certificate.
    private static func certificates(
        _ path: String,
        parameter: String
    ) throws(PostgresConfigurationError) -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw PostgresConfigurationError(
                code: .invalidConfiguration,
                reason: "\(parameter) \(path) cannot be read as PEM certificates",
                context: String(describing: error)
            )
        }
        guard !certificates.isEmpty else {
            throw PostgresConfigurationError(
                code: .invalidConfiguration,
                reason: "\(parameter) \(path) holds no certificate"
            )
        }
        return certificates
    }

    /// The TLS settings postgres-nio is told, libpq's way: `prefer` and `require` encrypt without checking the
    /// certificate (`require` with a root certificate file checks the chain, as libpq does), `verify-ca` checks the
    /// chain, `verify-full` the chain and the host name; the roots are ``rootCertificates`` or the system's. Nil for
    /// `disable`; `prefer` tries TLS, every other mode requires it (``runtimeConfiguration``).
    var tlsConfiguration: TLSConfiguration? {
        guard tls != .disable else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tls {
        case .verifyFull: configuration.certificateVerification = .fullVerification
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .require where rootCertificates != nil: configuration.certificateVerification = .noHostnameVerification
        default: configuration.certificateVerification = .none
        }
        if let rootCertificates {
            configuration.trustRoots = .certificates(rootCertificates.certificates)
        }
        if let clientCertificate {
            configuration.certificateChain = clientCertificate.chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(clientCertificate.key)
        }
        return configuration
    }
}
