import AppStoreTestSupport
import Foundation
import NotificationStore
import PipelineServices
import PostgresRuntime
import Testing

@Suite("Database settings: libpq's TLS parameters in the URL or as settings", .tags(.fast))
struct DatabaseSettingsTests {
    static let bundle = Fixtures.appleDirectory.appendingPathComponent("AppleRootCA-G3.pem").path

    static func database(_ environment: [String: String]) async throws -> NotificationStoreConfiguration {
        try await PipelineSettings.load(file: nil, environment: environment).database()
    }

    @Test("sslMode and sslRootCert settings win over a URL that names neither; a missing file is named at start")
    func tlsSettings() async throws {
        let url = "postgres://asnp@db.example.com:5432/asnp"
        let plain = try await Self.database(["DATABASE_URL": url])
        #expect(plain.tls == .prefer && plain.rootCertificates == nil)

        let verified = try await Self.database([
            "DATABASE_URL": url, "DATABASE_SSL_MODE": "verify-full", "DATABASE_SSL_ROOT_CERT": Self.bundle,
        ])
        #expect(verified.tls == .verifyFull)
        #expect(verified.rootCertificates?.path == Self.bundle)
        #expect(verified.redactedURL.contains("sslmode=verify-full&sslrootcert=\(Self.bundle)"))

        let fromURL = try await Self.database(["DATABASE_URL": url + "?sslmode=verify-ca&sslrootcert=\(Self.bundle)"])
        #expect(fromURL.tls == .verifyCA && fromURL.rootCertificates?.path == Self.bundle)

        let missing = await #expect(throws: SettingsError.self) {
            try await Self.database(["DATABASE_URL": url, "DATABASE_SSL_ROOT_CERT": "/nonexistent/ca.pem"])
        }
        #expect(missing.map { "\($0)" }?.contains("sslrootcert /nonexistent/ca.pem") == true)
        let lonelyCertificate = await #expect(throws: SettingsError.self) {
            try await Self.database(["DATABASE_URL": url, "DATABASE_SSL_CERT": Self.bundle])
        }
        #expect(lonelyCertificate.map { "\($0)" }?.contains("database.sslKey go together") == true)
        await #expect(throws: SettingsError.self) {
            try await Self.database(["DATABASE_URL": url, "DATABASE_SSL_MODE": "allow"])
        }
    }
}
