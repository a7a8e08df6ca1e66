import AppStoreTestSupport
import Foundation
import ReadAPI
import Testing

@Suite("asnp api key new: a key printed once, and the entry that lets it read", .tags(.process))
struct APIKeyCommandTests {
    @Test("the printed entry, put in a keys file, lets the printed key read its scopes and nothing else")
    func newKey() async throws {
        let result = try await ASNPProcess.run([
            "api", "key", "new", "--id", "billing-2026-11", "--scope", "com.example.notes:Production,Sandbox",
            "--requests-per-second", "20",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let key = try #require(lines.first { $0.hasPrefix("asnp_") })
        let entry = try #require(lines.first { $0.hasPrefix("{") })
        let keyring = try APIKeyring(json: Array("{\"keys\": [\(entry)]}".utf8))
        let found = try #require(keyring.key(presented: key))
        #expect(found.id == "billing-2026-11" && found.requestsPerSecond == 20)
        #expect(
            found.scopes == [
                APIScope(bundleId: "com.example.notes", environment: "Production"),
                APIScope(bundleId: "com.example.notes", environment: "Sandbox"),
            ]
        )
        #expect(!entry.contains(key), "the entry holds the key's hash, not the key")
    }

    @Test("a scope naming an environment Apple lacks is refused before any key is made")
    func badScope() async throws {
        let result = try await ASNPProcess.run(["api", "key", "new", "--id", "x", "--scope", "com.example:Staging"])
        #expect(result.status == 2, "a usage error: \(result.standardError)")
        #expect(result.standardError.contains("Staging"))
        #expect(!result.standardOutput.contains("asnp_"))
    }
}
