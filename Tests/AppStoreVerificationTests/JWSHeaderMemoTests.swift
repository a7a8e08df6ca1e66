import Testing

@testable import AppStoreVerification

@Suite("The memo of decoded JWS headers")
struct JWSHeaderMemoTests {
    static func header(_ tag: String) -> JWSHeader {
        JWSHeader(alg: "ES256", x5c: ["leaf-\(tag)", "intermediate-\(tag)", "root-\(tag)"])
    }

    /// Looks `segment` up in `memo`.
    static func lookUp(_ segment: String, in memo: JWSHeaderMemo) -> JWSHeader? {
        Array(segment.utf8).withUnsafeBufferPointer { memo.header(for: $0) }
    }

    static func remember(_ header: JWSHeader, for segment: String, in memo: JWSHeaderMemo) {
        Array(segment.utf8).withUnsafeBufferPointer { memo.remember(header, for: $0) }
    }

    @Test("a remembered header is served for exactly the same bytes, and only for them")
    func exactBytesOnly() {
        let memo = JWSHeaderMemo()
        let segment = "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJBIiwiQiIsIkMiXX0"
        Self.remember(Self.header("a"), for: segment, in: memo)
        #expect(Self.lookUp(segment, in: memo)?.x5c == Self.header("a").x5c)
        // One byte changed, same length: a different header, decoded afresh.
        var changed = Array(segment.utf8)
        changed[changed.count / 2] ^= 0x01
        #expect(changed.withUnsafeBufferPointer { memo.header(for: $0) } == nil)
        #expect(Self.lookUp(segment + "A", in: memo) == nil)
        #expect(Self.lookUp(String(segment.dropLast()), in: memo) == nil)
        #expect(Self.lookUp("", in: memo) == nil)
    }

    @Test("the memo holds at most its capacity, replacing the oldest header first")
    func bounded() {
        let memo = JWSHeaderMemo()
        let segments = (0...JWSHeaderMemo.capacity).map { "header-segment-\($0)" }
        for (index, segment) in segments.enumerated() {
            Self.remember(Self.header(String(index)), for: segment, in: memo)
        }
        #expect(Self.lookUp(segments[0], in: memo) == nil)
        for (index, segment) in segments.enumerated().dropFirst() {
            #expect(Self.lookUp(segment, in: memo)?.x5c == Self.header(String(index)).x5c)
        }
    }

    @Test("a header segment longer than the bound is not remembered")
    func oversizedNotRemembered() {
        let memo = JWSHeaderMemo()
        let long = String(repeating: "A", count: JWSHeaderMemo.maximumHeaderSize + 1)
        Self.remember(Self.header("long"), for: long, in: memo)
        #expect(Self.lookUp(long, in: memo) == nil)
    }
}
