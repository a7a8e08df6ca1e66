import AppStoreTestSupport
import Testing

@testable import AppStoreModels

@Suite("Compact JWS segments", .tags(.fast))
struct CompactJWSSegmentsTests {
    /// Header, payload and signature ranges.
    static func segments(_ text: String) -> [Range<Int>]? {
        let segments = Array(text.utf8).withUnsafeBufferPointer { CompactJWSSegments($0) }
        return segments.map { [$0.header, $0.payload, $0.signature] }
    }

    @Test("Exactly two dots split a value into header, payload and signature, empty segments included")
    func twoDots() {
        #expect(Self.segments("ab.cde.f") == [0..<2, 3..<6, 7..<8])
        #expect(Self.segments("..") == [0..<0, 1..<1, 2..<2])
        #expect(Self.segments("a.b.") == [0..<1, 2..<3, 4..<4])
        // Dots far apart, as in a 15 KB body.
        let long = String(repeating: "h", count: 4_000) + "." + String(repeating: "p", count: 11_000) + ".sig"
        #expect(Self.segments(long) == [0..<4_000, 4_001..<15_001, 15_002..<15_005])
    }

    @Test(
        "Fewer or more than two dots is not a compact JWS",
        arguments: ["", "abc", ".", "a.b", "a.b.c.d", "...", "a.b.c."]
    )
    func notTwoDots(text: String) {
        #expect(Self.segments(text) == nil)
    }
}
