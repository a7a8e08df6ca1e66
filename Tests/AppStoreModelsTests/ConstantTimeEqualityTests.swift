import AppStoreTestSupport
import Testing

@testable import AppStoreModels

@Suite("constant-time equality of secrets", .tags(.fast))
struct ConstantTimeEqualityTests {
    @Test("answers as plain equality does, whichever side is longer")
    func answers() {
        #expect(constantTimeEquals("abc", "abc"))
        #expect(!constantTimeEquals("abc", "abd"))
        #expect(!constantTimeEquals("abc", "ab"))
        #expect(!constantTimeEquals("ab", "abc"))
        #expect(!constantTimeEquals("", "a"))
        #expect(constantTimeEquals("", ""))
        #expect(constantTimeEquals("token"[...], "token"), "a substring, as the ingress's route gives it")
        // Lengths that differ by a multiple of 256 must not look equal.
        #expect(!constantTimeEquals(String(repeating: "a", count: 256), ""))
        #expect(!constantTimeEquals("", String(repeating: "a", count: 256)))
    }
}
