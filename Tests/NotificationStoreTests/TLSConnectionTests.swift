import AppStoreTestSupport
import Foundation
import Logging
import NotificationStore
import PostgresRuntime
import StoreTestSupport
import Testing

/// PostgreSQL over TLS as libpq users know it, against a real server with `ssl=on` and a CA made for the test.
@Suite("PostgreSQL over TLS: sslmode, sslrootcert, sslcert and sslkey as libpq means them", .tags(.store))
struct TLSConnectionTests {
    /// Connects with `url` and runs a query; the error when it cannot. A refusal is awaited `refusal` long: the pool
    /// retries refused connections until the operation's timeout, then the store connects once more to say why.
    static func connect(_ url: String, refusal: Bool = false) async -> NotificationStoreError? {
        do {
            var configuration = try NotificationStoreConfiguration(url: url)
            configuration.connectTimeout = .seconds(10)
            // A connection that should succeed gets time for a loaded machine: the first one also migrates (a busy
            // fresh-clone run once took longer than 20 s).
            configuration.operationTimeout = refusal ? .seconds(2) : .seconds(60)
            var logger = Logger(label: "asnp.store.tls-test")
            logger.logLevel = .critical
            _ = try await NotificationStore.withRunning(configuration: configuration, logger: logger) { store in
                try await store.migrate()
            }
            return nil
        } catch let error as NotificationStoreError {
            return error
        } catch {
            return NotificationStoreError(code: .queryFailed, reason: "unexpected: \(error)")
        }
    }

    /// Expects `url` to connect; says why it did not.
    static func expectConnects(_ url: String, sourceLocation: SourceLocation = #_sourceLocation) async {
        let error = await connect(url)
        #expect(error == nil, "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    @Test(
        """
        verify-full with sslrootcert connects; another CA, a host name the certificate does not name, and plaintext \
        where TLS is required are refused, each saying which; verify-ca skips the name; require checks the chain only \
        with a root file; a client certificate where the server asks for one
        """
    )
    func libpqModes() async throws {
        let tls = try await TLSTestServer.start()
        let database = "postgres"
        let ca = "sslrootcert=\(tls.caPath)"
        await Self.expectConnects(tls.url(database: database, "sslmode=verify-full&\(ca)"))

        let otherCA = await Self.connect(
            tls.url(database: database, "sslmode=verify-full&sslrootcert=\(tls.otherCAPath)"),
            refusal: true
        )
        #expect(
            otherCA?.reason.contains("not signed by a CA in sslrootcert \(tls.otherCAPath)") == true,
            "\(String(describing: otherCA))"
        )

        let wrongHost = await Self.connect(
            tls.url(host: "127.0.0.1", database: database, "sslmode=verify-full&\(ca)"),
            refusal: true
        )
        #expect(
            wrongHost?.reason.contains("does not name the host 127.0.0.1") == true,
            "\(String(describing: wrongHost))"
        )

        await Self.expectConnects(tls.url(host: "127.0.0.1", database: database, "sslmode=verify-ca&\(ca)"))
        await Self.expectConnects(tls.url(database: database, "sslmode=require"))
        let requireWithRoot = await Self.connect(
            tls.url(database: database, "sslmode=require&sslrootcert=\(tls.otherCAPath)"),
            refusal: true
        )
        #expect(
            requireWithRoot?.reason.contains("not signed by a CA") == true,
            "\(String(describing: requireWithRoot))"
        )
        // The server refuses plaintext (hostnossl reject): disable fails with its answer.
        #expect(await Self.connect(tls.url(database: database, "sslmode=disable"), refusal: true) != nil)

        let client = "sslcert=\(tls.clientCertificatePath)&sslkey=\(tls.clientKeyPath)"
        await Self.expectConnects(tls.url(user: "certuser", database: database, "sslmode=verify-full&\(ca)&\(client)"))
        let noCertificate = await Self.connect(
            tls.url(user: "certuser", database: database, "sslmode=verify-full&\(ca)"),
            refusal: true
        )
        #expect(noCertificate?.code == .authenticationFailed, "\(String(describing: noCertificate))")

        // A server without TLS, where TLS is required.
        let plain = try await TestPostgresServer.shared()
        let refused = await Self.connect(
            "postgres://postgres@127.0.0.1:\(plain.port)/postgres?sslmode=require",
            refusal: true
        )
        #expect(refused?.reason.contains("does not offer TLS") == true, "\(String(describing: refused))")
    }

    @Test("TLS files are read when the settings are: a missing or empty file is named at once")
    func unreadableFiles() throws {
        let missing = "/nonexistent/ca.pem"
        #expect(throws: PostgresConfigurationError.self) {
            try NotificationStoreConfiguration(url: "postgres://u@h/d?sslmode=verify-full&sslrootcert=\(missing)")
        }
        do {
            _ = try NotificationStoreConfiguration(url: "postgres://u@h/d?sslrootcert=\(missing)")
        } catch {
            #expect(error.reason.contains("sslrootcert \(missing)"))
        }
        #expect(throws: PostgresConfigurationError.self) {
            try NotificationStoreConfiguration(url: "postgres://u@h/d?sslcert=/nonexistent/c.pem")
        }
        let allow = #expect(throws: PostgresConfigurationError.self) {
            try NotificationStoreConfiguration(url: "postgres://u@h/d?sslmode=allow")
        }
        #expect(allow?.reason.contains("allow") == true)
        let system = try NotificationStoreConfiguration(url: "postgres://u@h/d?sslmode=verify-full&sslrootcert=system")
        #expect(system.rootCertificates == nil)
    }
}
