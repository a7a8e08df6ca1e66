#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PostgresConfiguration {
    /// Settings from a libpq connection URL:
    /// `postgres://user[:password]@host[:port]/database[?sslmode=…&sslrootcert=…&sslcert=…&sslkey=…&host=/socket/dir&application_name=…]`.
    ///
    /// `sslrootcert` names a PEM bundle of the CAs to trust (`system`: the system's); `sslcert` and `sslkey` a client
    /// certificate and its unencrypted key. The files are read here.
    ///
    /// A `host` query parameter naming a directory selects the Unix socket in it, as libpq does. Percent-encoded
    /// user names and passwords are decoded.
    /// - Throws: ``PostgresConfigurationError/Code/invalidConfiguration``, naming what is wrong but never the password.
    package init(url text: String) throws(PostgresConfigurationError) {
        func invalid(_ reason: String) -> PostgresConfigurationError {
            PostgresConfigurationError(code: .invalidConfiguration, reason: "database URL: \(reason)")
        }
        guard let components = URLComponents(string: text),
            let scheme = components.scheme, scheme == "postgres" || scheme == "postgresql"
        else {
            throw invalid("expected postgres://user@host:port/database")
        }
        guard let username = components.user, !username.isEmpty else {
            throw invalid("no user name (postgres://USER@host/database)")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw invalid("no database name (postgres://user@host/DATABASE)")
        }
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] {
            parameters[item.name] = item.value ?? ""
        }
        let port = components.port ?? 5432
        let endpoint: Endpoint
        if let socketDirectory = parameters.removeValue(forKey: "host"), socketDirectory.hasPrefix("/") {
            endpoint = .unixSocket(path: socketDirectory + "/.s.PGSQL.\(port)")
        } else if let host = components.host, !host.isEmpty {
            endpoint = .tcp(host: host, port: port)
        } else {
            throw invalid("no host (postgres://user@HOST/database, or ?host=/socket/directory)")
        }
        var tls = TLSMode.prefer
        if let sslmode = parameters.removeValue(forKey: "sslmode") {
            guard let mode = TLSMode(sslmode: sslmode) else {
                throw invalid(
                    "sslmode '\(sslmode)' is not one of disable, prefer, require, verify-ca, verify-full"
                        + (sslmode == "allow" ? " (allow, plain first, is not supported: use prefer)" : "")
                )
            }
            tls = mode
        }
        self.init(
            endpoint: endpoint,
            username: username,
            password: components.password,
            database: database,
            tls: tls
        )
        if let applicationName = parameters.removeValue(forKey: "application_name") {
            self.applicationName = applicationName
        }
        if let root = parameters.removeValue(forKey: "sslrootcert"), root != "system" {
            rootCertificates = try RootCertificates(path: root)
        }
        let certificate = parameters.removeValue(forKey: "sslcert")
        let key = parameters.removeValue(forKey: "sslkey")
        if certificate != nil || key != nil {
            guard let certificate, let key else { throw invalid("sslcert and sslkey go together") }
            clientCertificate = try ClientCertificate(certificatePath: certificate, keyPath: key)
        }
        if let unknown = parameters.keys.sorted().first {
            throw invalid(
                "unsupported parameter '\(unknown)' "
                    + "(supported: sslmode, sslrootcert, sslcert, sslkey, host, application_name)"
            )
        }
    }

    /// The URL of these settings with the password left out, fit for logs and startup banners.
    package var redactedURL: String {
        var text = "postgres://\(username)\(password == nil ? "" : ":<redacted>")@"
        var query = ["sslmode=\(tls)"]
        if let rootCertificates { query.append("sslrootcert=\(rootCertificates.path)") }
        if let clientCertificate {
            query += ["sslcert=\(clientCertificate.certificatePath)", "sslkey=\(clientCertificate.keyPath)"]
        }
        switch endpoint {
        case .tcp(let host, let port):
            text += host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unixSocket(let path):
            // libpq names the socket's directory and port; the file is `DIRECTORY/.s.PGSQL.PORT`.
            let file = path.split(separator: "/").last.map(String.init) ?? ""
            if file.hasPrefix(".s.PGSQL."), let port = Int(file.dropFirst(".s.PGSQL.".count)) {
                text += ":\(port)"
                query.insert("host=\(path.dropLast(file.count + 1))", at: 0)
            } else {
                query.insert("host=\(path)", at: 0)
            }
        }
        return text + "/\(database)?" + query.joined(separator: "&")
    }
}
