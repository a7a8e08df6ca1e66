import AppStoreTestSupport
import Foundation
import Testing

@testable import ReadAPI

@Suite("Read API's parts: keys file, token buckets, entity tags, cursors", .tags(.fast))
struct ReadAPIUnitTests {
    @Test("a generated key is found by its hash, and nothing else is")
    func generatedKeyIsFound() throws {
        let (key, sha256) = APIKeyring.generateKey()
        #expect(key.hasPrefix("asnp_") && key.count == 48)
        let keyring = try APIKeyring(json: Array(Self.file(sha256: sha256).utf8))
        let found = try #require(keyring.key(presented: key))
        #expect(found.id == "billing")
        #expect(
            found.scopes == [
                APIScope(bundleId: "com.example.notes", environment: "Production"),
                APIScope(bundleId: "com.example.notes", environment: "Sandbox"),
            ]
        )
        #expect(keyring.key(presented: sha256) == nil, "the hash itself is no key")
        #expect(keyring.key(presented: key + "x") == nil)
    }

    @Test(
        "an unusable keys file is refused, naming the entry",
        arguments: [
            ("not json", "not the JSON"),
            (file(sha256: "abc"), "not 64 hex digits"),
            (file(sha256: String(repeating: "a", count: 64), environment: "Staging"), "environment 'Staging'"),
            (file(sha256: String(repeating: "a", count: 64), id: "has space"), "a key id must be"),
            (
                "{\"keys\": [\(entry(String(repeating: "a", count: 64))), \(entry(String(repeating: "b", count: 64)))]}",
                "appears twice"
            ),
        ]
    )
    func invalidFiles(contents: String, reason: String) {
        #expect {
            try APIKeyring(json: Array(contents.utf8))
        } throws: { error in
            (error as? ReadAPIError)?.code == .invalidKeys && "\(error)".contains(reason)
        }
    }

    @Test("a scope is written bundleId:environments; a missing part or an environment Apple lacks is refused")
    func scopes() throws {
        let scope = try APIKeysFile.Entry.Scope(parsing: "com.example.notes:Production,Sandbox")
        #expect(scope.bundleId == "com.example.notes" && scope.environments == ["Production", "Sandbox"])
        for text in ["com.example.notes", ":Production", "com.example.notes:", "com.example.notes:Staging"] {
            #expect(throws: ReadAPIError.self, "\(text)") { try APIKeysFile.Entry.Scope(parsing: text) }
        }
    }

    @Test("a token bucket gives its burst, then one token per 1/rate, and says how long until the next")
    func tokenBucket() throws {
        let start = ContinuousClock.now
        var bucket = TokenBucket(rate: 2, burst: 3, now: start)
        func take(_ at: Duration) -> Duration? { bucket.take(now: start + at) }
        for _ in 0..<3 { #expect(take(.zero) == nil) }
        let wait = take(.zero)
        #expect(wait == .milliseconds(500))
        let early = take(.milliseconds(499))
        #expect(early != nil)
        let due = take(.milliseconds(500))
        #expect(due == nil)
        let later = (0..<4).map { _ in take(.seconds(60)) }
        #expect(later.map { $0 == nil } == [true, true, true, false], "refilled, never past the burst")
    }

    @Test("If-None-Match matches a tag in a list, weakly, or *")
    func entityTags() {
        let tag = EntityTag.of(Array("{}".utf8))
        #expect(tag.count == 24 && tag.hasPrefix("\"") && tag.hasSuffix("\""))
        #expect(EntityTag.matches(ifNoneMatch: [tag], tag))
        #expect(EntityTag.matches(ifNoneMatch: ["\"other\", W/\(tag)"], tag))
        #expect(EntityTag.matches(ifNoneMatch: ["*"], tag))
        #expect(!EntityTag.matches(ifNoneMatch: ["\"other\""], tag))
        #expect(!EntityTag.matches(ifNoneMatch: [], tag))
    }

    @Test("a cursor reads back as written; text no cursor wrote is refused")
    func cursors() {
        let cursor = NotificationCursor(
            direction: .newer,
            microseconds: 1_764_000_000_123_456,
            notificationUUID: UUID()
        )
        #expect(NotificationCursor(text: cursor.text) == cursor)
        #expect(NotificationCursor(text: "not-a-cursor") == nil)
        #expect(NotificationCursor(text: String(repeating: "A", count: 200)) == nil)
    }

    static func entry(_ sha256: String, id: String = "billing", environment: String = "Production") -> String {
        """
        {"id": "\(id)", "sha256": "\(sha256)",
         "scopes": [{"bundleId": "com.example.notes", "environments": ["\(environment)", "Sandbox"]}]}
        """
    }

    static func file(sha256: String, id: String = "billing", environment: String = "Production") -> String {
        "{\"keys\": [\(entry(sha256, id: id, environment: environment))]}"
    }
}
