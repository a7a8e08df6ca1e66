import AppStoreModels
import AppStoreTestSupport
import Testing

@Suite("The memo of values worked out from JWS header segments", .tags(.fast))
struct JWSHeaderSegmentMemoTests {
    typealias Memo = JWSHeaderSegmentMemo<[String]>

    /// A value to remember: a header's certificate chain, say.
    static func header(_ tag: String) -> [String] {
        ["leaf-\(tag)", "intermediate-\(tag)", "root-\(tag)"]
    }

    /// Looks `segment` up in `memo`.
    static func lookUp(_ segment: String, in memo: Memo) -> [String]? {
        Array(segment.utf8).withUnsafeBufferPointer { memo.value(for: $0) }
    }

    static func remember(_ header: [String], for segment: String, in memo: Memo) {
        Array(segment.utf8).withUnsafeBufferPointer { memo.remember(header, for: $0) }
    }

    @Test("a remembered value is served for exactly the same bytes, and only for them")
    func exactBytesOnly() {
        let memo = Memo()
        let segment = "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJBIiwiQiIsIkMiXX0"
        Self.remember(Self.header("a"), for: segment, in: memo)
        #expect(Self.lookUp(segment, in: memo) == Self.header("a"))
        // One byte changed, same length: a different header, decoded afresh.
        var changed = Array(segment.utf8)
        changed[changed.count / 2] ^= 0x01
        #expect(changed.withUnsafeBufferPointer { memo.value(for: $0) } == nil)
        #expect(Self.lookUp(segment + "A", in: memo) == nil)
        #expect(Self.lookUp(String(segment.dropLast()), in: memo) == nil)
        #expect(Self.lookUp("", in: memo) == nil)
    }

    @Test("the memo holds at most its capacity, replacing the oldest segment first")
    func bounded() {
        let memo = Memo()
        let segments = (0...Memo.capacity).map { "header-segment-\($0)" }
        for (index, segment) in segments.enumerated() {
            Self.remember(Self.header(String(index)), for: segment, in: memo)
        }
        #expect(Self.lookUp(segments[0], in: memo) == nil)
        for (index, segment) in segments.enumerated().dropFirst() {
            #expect(Self.lookUp(segment, in: memo) == Self.header(String(index)))
        }
    }

    @Test("a segment longer than the bound is not remembered")
    func oversizedNotRemembered() {
        let memo = Memo()
        let long = String(repeating: "A", count: Memo.maximumSegmentSize + 1)
        Self.remember(Self.header("long"), for: long, in: memo)
        #expect(Self.lookUp(long, in: memo) == nil)
    }
}
