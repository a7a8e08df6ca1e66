import Foundation
import LocalPostgres

/// A PostgreSQL server with `ssl=on`, its certificate issued by a CA made for the test (naming `localhost`, not
/// `127.0.0.1`), and a second CA that vouches for nothing of it. Certificates come from the
/// `openssl` command, an independent implementation.
///
/// Connections over TCP must use TLS; the role `certuser` must present a client certificate issued by the CA
/// (`pg_hba.conf` `cert`), every other role is trusted.
package struct TLSTestServer: Sendable {
    package let server: TestPostgresServer
    /// PEM files: the server's CA, a CA unrelated to the server, a client certificate and key for `certuser`.
    package let caPath: String
    package let otherCAPath: String
    package let clientCertificatePath: String
    package let clientKeyPath: String

    /// A libpq URL for `database` on this server: `host` as given (`localhost` is named by the certificate,
    /// `127.0.0.1` is not), `parameters` appended.
    package func url(user: String = "postgres", host: String = "localhost", database: String, _ parameters: String)
        -> String
    {
        "postgres://\(user)@\(host):\(server.port)/\(database)?\(parameters)"
    }

    package static func start() async throws -> TLSTestServer {
        let server = try await TestPostgresServer.start(
            settings: [
                "ssl": "on", "ssl_cert_file": "server.crt", "ssl_key_file": "server.key", "ssl_ca_file": "ca.crt",
            ]
        ) { data in
            // Beside the data directory, so that the files go with the server's directory when the tests exit.
            let directory = pkiDirectory(serverDirectory: (data as NSString).deletingLastPathComponent)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try makePKI(in: directory)
            for name in ["server.crt", "server.key", "ca.crt"] {
                try? FileManager.default.removeItem(atPath: data + "/" + name)
                try FileManager.default.copyItem(atPath: directory + "/" + name, toPath: data + "/" + name)
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: data + "/server.key")
            try Data(
                """
                local all all trust
                hostssl all certuser 127.0.0.1/32 cert
                hostssl all all 127.0.0.1/32 trust
                hostnossl all all 127.0.0.1/32 reject

                """.utf8
            ).write(to: URL(fileURLWithPath: data + "/pg_hba.conf"))
        }
        try await server.psql("postgres", "CREATE ROLE certuser LOGIN SUPERUSER")
        let pki = pkiDirectory(serverDirectory: server.directory)
        return TLSTestServer(
            server: server,
            caPath: pki + "/ca.crt",
            otherCAPath: pki + "/other-ca.crt",
            clientCertificatePath: pki + "/client.crt",
            // postgres-nio reads PKCS#8 and traditional EC keys; the client key stays readable by the test process.
            clientKeyPath: pki + "/client.key"
        )
    }

    private static func pkiDirectory(serverDirectory: String) -> String {
        serverDirectory + "/pki"
    }

    private static func makePKI(in directory: String) throws {
        func path(_ name: String) -> String { directory + "/" + name }
        func openssl(_ arguments: [String]) throws {
            _ = try LocalPostgresServer.run("/usr/bin/openssl", arguments)
        }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        for ca in ["ca", "other-ca"] {
            try openssl(
                ["req", "-x509"] + key
                    + [
                        "-keyout", path("\(ca).key"), "-out", path("\(ca).crt"), "-subj", "/CN=asnp test \(ca)",
                        "-days", "2",
                    ]
            )
        }
        try Data("subjectAltName=DNS:localhost\n".utf8).write(to: URL(fileURLWithPath: path("server.ext")))
        for (name, subject, extensions) in [
            ("server", "/CN=localhost", ["-extfile", path("server.ext")]), ("client", "/CN=certuser", []),
        ] {
            try openssl(
                ["req"] + key + ["-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", subject]
            )
            try openssl(
                [
                    "x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
                    "-CAcreateserial", "-out", path("\(name).crt"), "-days", "2",
                ] + extensions
            )
        }
    }
}
