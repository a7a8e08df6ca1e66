import AppStoreTestSupport
import Foundation
import NotificationStore
import PipelineServices
import PostgresRuntime
import ReadAPI
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

    @Test(
        """
        the read API reads api.database.* when api.database.url is set (a replica), else database.*; its reads time \
        out after api.timeoutSeconds (5 s), its keys file is required, its ports must differ
        """
    )
    func apiDatabase() async throws {
        func api(_ environment: [String: String]) async throws -> APIRoleSettings {
            try await PipelineSettings.load(file: nil, environment: environment).apiRole()
        }
        let primary = "postgres://asnp@db.example.com:5432/asnp"
        let replica = "postgres://asnp_api@replica.example.com:5432/asnp"
        let shared = try await api([
            "API_KEYS_FILE": "/run/keys.json", "DATABASE_URL": primary, "DATABASE_MAX_CONNECTIONS": "3",
        ])
        #expect(shared.database.endpoint == .tcp(host: "db.example.com", port: 5432))
        #expect(shared.database.maximumConnections == 3 && shared.database.operationTimeout == .seconds(5))
        #expect(shared.database.applicationName == "asnp-api" && shared.api.keysFile == "/run/keys.json")
        let own = try await api([
            "API_KEYS_FILE": "/run/keys.json", "DATABASE_URL": primary, "DATABASE_MAX_CONNECTIONS": "3",
            "API_DATABASE_URL": replica, "API_DATABASE_SSL_MODE": "require", "API_TIMEOUT_SECONDS": "2",
        ])
        #expect(own.database.endpoint == .tcp(host: "replica.example.com", port: 5432))
        #expect(own.database.username == "asnp_api" && own.database.tls == .require)
        #expect(own.database.maximumConnections == 8, "none of database.* applies to a URL of its own")
        #expect(own.database.operationTimeout == .seconds(2))
        let noKeys = await #expect(throws: SettingsError.self) { try await api(["DATABASE_URL": primary]) }
        #expect(noKeys.map { "\($0)" }?.contains("api.keysFile") == true)
        await #expect(throws: SettingsError.self) {
            try await api([
                "API_KEYS_FILE": "/run/keys.json", "DATABASE_URL": primary, "API_PORT": "9090",
                "API_STATUS_PORT": "9090",
            ])
        }
    }
}
